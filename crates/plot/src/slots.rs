//! What box plots and grouped bars share: configurations side by side on the x axis, a slot
//! each, and in every slot a mark per series (a box or a bar), the slot's label under it.
//! Configurations of different benchmarks, metrics or units get panels of their own, one above
//! the other; the first panel carries the legend.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vernier_analysis::ConfigSummary;

use crate::labels::{config_parts, distinguish, join_config, name_parts, ConfigOrder};
use crate::style::{self, colour};
use crate::{Draw, OrDraw, PlotError, Series};

/// Pixels around each panel's chart.
const MARGIN: u32 = 12;

/// The chart of one panel: x in slots (configuration `i` is centred on `i`), y in the metric.
pub(crate) type SlotChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Configurations that share a benchmark, metric and unit, drawn on one axis.
pub(crate) struct Panel {
    pub benchmark: String,
    pub metric: String,
    pub unit: String,
    /// Configuration labels (`ConfigSummary::label`), in the natural order of their parts.
    pub configs: Vec<String>,
    /// The parts of each configuration's name ([`config_parts`]), as `configs` orders them.
    pub parts: Vec<Vec<String>>,
}

/// The panels of `series`: configurations with at least one measured run, grouped by
/// benchmark, metric and unit in the order they first appear.
pub(crate) fn panels(series: &[Series]) -> Vec<Panel> {
    let mut panels: Vec<Panel> = Vec::new();
    for s in series {
        for c in s.summaries.iter().filter(|c| !c.values.is_empty()) {
            let label = c.label();
            let at = panels
                .iter()
                .position(|p| {
                    p.benchmark == c.benchmark && p.metric == c.metric && p.unit == c.unit
                })
                .unwrap_or_else(|| {
                    panels.push(Panel {
                        benchmark: c.benchmark.clone(),
                        metric: c.metric.clone(),
                        unit: c.unit.clone(),
                        configs: Vec::new(),
                        parts: Vec::new(),
                    });
                    panels.len() - 1
                });
            let panel = &mut panels[at];
            if !panel.configs.contains(&label) {
                panel.configs.push(label);
                panel.parts.push(config_parts(&c.options, &c.loads));
            }
        }
    }
    // Slots in the natural order of their configurations: numbers by magnitude whatever order
    // the sessions ran them in (groups=1, 2, 4, 10), words in the order they ran (as `show`
    // lists them).
    for panel in &mut panels {
        let order = ConfigOrder::of_parts(panel.parts.clone());
        let mut slots: Vec<(String, Vec<String>)> = std::mem::take(&mut panel.configs)
            .into_iter()
            .zip(std::mem::take(&mut panel.parts))
            .collect();
        slots.sort_by(|a, b| order.cmp_parts(&a.1, &b.1));
        (panel.configs, panel.parts) = slots.into_iter().unzip();
    }
    panels
}

/// How many panels a box plot or grouped bars of `series` stand one above the other.
pub fn slot_panels(series: &[Series]) -> usize {
    panels(series).len()
}

/// The summary of configuration `label` (metric `metric`) in `s`, when it has runs.
pub(crate) fn find<'a>(s: &'a Series, label: &str, metric: &str) -> Option<&'a ConfigSummary> {
    s.summaries
        .iter()
        .find(|c| c.metric == metric && !c.values.is_empty() && c.label() == label)
}

/// The confidence level of the intervals of `series` (their first summary's).
fn level(series: &[Series]) -> f64 {
    series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(|c| c.level)
        .next()
        .unwrap_or(vernier_model::CONFIDENCE_LEVEL)
}

/// The caption of a panel's x axis and the label under each slot: with several configurations,
/// each slot is labelled with the parts of its configuration that vary among the panel's
/// configurations (`groups=4`), and the caption names the benchmark and the parts all share;
/// with one, the caption names it and the slot has no label (its marks are told apart by
/// series, [`series_labels`]).
pub(crate) fn slot_labels(panel: &Panel) -> (String, Vec<String>) {
    if let [only] = panel.configs.as_slice() {
        return (only.clone(), vec![String::new()]);
    }
    let (common, own) = distinguish(&panel.parts);
    let caption = if common.is_empty() {
        format!("{} configuration", panel.benchmark)
    } else {
        format!(
            "{} configuration, each with {}",
            panel.benchmark,
            join_config(&common)
        )
    };
    let labels = own
        .iter()
        .zip(&panel.parts)
        .map(|(own, all)| {
            // A configuration whose parts all others share (the defaults, when the others set
            // more options) is named in full.
            if own.is_empty() {
                if all.is_empty() {
                    "defaults".to_string()
                } else {
                    join_config(all)
                }
            } else {
                join_config(own)
            }
        })
        .collect();
    (caption, labels)
}

/// The label under each series' mark when a panel has a single configuration: the parts of
/// the series' name that vary among the figure's series (`kernel=6.9` of `kernel=6.9,host=x`).
pub(crate) fn series_labels(series: &[Series]) -> Vec<String> {
    let names: Vec<Vec<String>> = series.iter().map(|s| name_parts(&s.name)).collect();
    let (_, own) = distinguish(&names);
    own.iter()
        .zip(series)
        .map(|(own, s)| {
            if own.is_empty() {
                s.name.clone()
            } else {
                own.join(" ")
            }
        })
        .collect()
}

/// The marks a slot figure draws: what differs between box plots and bars.
pub(crate) trait SlotMarks {
    /// The part of a series' share of the slot that its mark is wide.
    const WIDTH: f64;

    /// What the marks show, for the x axis' caption: `bar: median, whisker: ...`.
    fn explained(&self, level: f64) -> String;

    /// The y axis' range for `values`, every value the panel's marks reach.
    fn y_range(&self, values: &[f64]) -> (f64, f64);

    /// The values of `summary` that its mark reaches.
    fn extent(&self, summary: &ConfigSummary) -> Vec<f64>;

    /// Draws the mark of `summary` centred on `x`, `width` wide, in `colour`.
    fn draw<DB: DrawingBackend>(
        &self,
        chart: &mut SlotChart<'_, DB>,
        summary: &ConfigSummary,
        x: f64,
        width: f64,
        colour: RGBColor,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static;
}

/// A figure of `panels`, each configuration a slot holding a mark `M` per series.
pub(crate) struct SlotFigure<'a, M> {
    pub series: &'a [Series],
    pub title: &'a str,
    pub panels: Vec<Panel>,
    pub marks: M,
}

impl<M: SlotMarks> Draw for SlotFigure<'_, M> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = style::titled(root, self.title)?;
        let areas = body.split_evenly((self.panels.len(), 1));
        let level = level(self.series);
        for (p, (panel, area)) in self.panels.iter().zip(&areas).enumerate() {
            self.draw_panel(root, area, panel, p == 0, level)?;
        }
        Ok(())
    }
}

impl<M: SlotMarks> SlotFigure<'_, M> {
    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
        legend: bool,
        level: f64,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let n = panel.configs.len();
        let mut values = Vec::new();
        for s in self.series {
            for label in &panel.configs {
                if let Some(c) = find(s, label, &panel.metric) {
                    values.extend(self.marks.extent(c));
                }
            }
        }
        let (lo, mut hi) = self.marks.y_range(&values);
        let (caption, labels) = slot_labels(panel);
        let explained = format!("({})", self.marks.explained(level));
        let one_line = format!("{caption} {explained}");
        // Each series has its share of the slot's middle 80%, its mark in the share's middle.
        let k = self.series.len().max(1);
        let share = 0.8 / k as f64;
        let width = share * M::WIDTH;
        let x_of = |i: usize, j: usize| i as f64 - 0.4 + share * (j as f64 + 0.5);
        // What each mark covers: its width and the values it reaches.
        let mut covered: Vec<(f64, f64, f64, f64)> = Vec::new();
        for (j, s) in self.series.iter().enumerate() {
            for (i, label) in panel.configs.iter().enumerate() {
                if let Some(c) = find(s, label, &panel.metric) {
                    let reach = self.marks.extent(c);
                    let (y0, y1) = reach
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |r, &v| {
                            (r.0.min(v), r.1.max(v))
                        });
                    if y0 <= y1 {
                        let x = x_of(i, j);
                        covered.push((x - width / 2.0, x + width / 2.0, y0, y1));
                    }
                }
            }
        }
        // The x axis' caption: what the slots share and what the marks show, on one line when
        // it fits the plotting area (the area less the y labels and the margins), else on two.
        let build = |hi: f64| -> Result<(SlotChart<'_, DB>, bool), PlotError> {
            let y_labels = style::y_label_area(lo, hi);
            let two_lines = style::text_width(&one_line, &style::axis_label())
                > area.dim_in_pixel().0.saturating_sub(y_labels + 2 * MARGIN);
            let chart = ChartBuilder::on(area)
                .margin(MARGIN)
                .x_label_area_size(if two_lines { 80 } else { 56 })
                .y_label_area_size(y_labels)
                .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..hi)
                .or_draw()?;
            Ok((chart, two_lines))
        };
        let (mut chart, mut two_lines) = build(hi)?;
        let mut corner = SeriesLabelPosition::UpperRight;
        if legend {
            // The legend in a corner of the plotting area that no mark reaches; where every
            // corner holds a mark, the axis made taller until the data lies below the legend.
            // Built again for the new range before anything is drawn (building draws nothing).
            for _ in 0..3 {
                let plot_width = chart.plotting_area().dim_in_pixel().0;
                let entries: Vec<String> = self
                    .series
                    .iter()
                    .map(|s| style::legend_entry(&s.name, plot_width))
                    .collect();
                let size = style::legend_size(&entries);
                let marks: Vec<Rect> = covered
                    .iter()
                    .map(|&(x0, x1, y0, y1)| mark_rect(&chart, (x0, y0), (x1, y1)))
                    .collect();
                if let Some(free) = free_corner(&chart, size, &marks) {
                    corner = free;
                    break;
                }
                let top = covered.iter().map(|m| m.3).fold(lo, f64::max);
                hi = hi.max(top_above(&chart, size, lo, top));
                (chart, two_lines) = build(hi)?;
            }
        }
        let plot_width = chart.plotting_area().dim_in_pixel().0;
        chart
            .configure_mesh()
            // No minor grid: the major lines are enough to read a value.
            .light_line_style(TRANSPARENT)
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(8)
            .y_label_formatter(&|v| style::compact(*v, lo, hi))
            .label_style(style::tick())
            .axis_desc_style(style::axis_label())
            .x_desc(style::axis_caption(
                if two_lines { &explained } else { &one_line },
                plot_width,
            ))
            .y_desc(style::with_unit(&panel.metric, &panel.unit))
            .draw()
            .or_draw()?;
        if two_lines {
            // Above the line plotters draws at the foot of the label area.
            let centre = chart.backend_coord(&((n as f64 - 1.0) / 2.0, lo)).0;
            let foot = area.get_base_pixel().1 + area.dim_in_pixel().1 as i32 - MARGIN as i32;
            root.draw(&Text::new(
                style::axis_caption(&caption, plot_width),
                (centre, foot - 24),
                style::axis_label().pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))
            .or_draw()?;
        }
        for (j, s) in self.series.iter().enumerate() {
            let c = colour(j);
            for (i, label) in panel.configs.iter().enumerate() {
                if let Some(summary) = find(s, label, &panel.metric) {
                    self.marks.draw(&mut chart, summary, x_of(i, j), width, c)?;
                }
            }
            if legend {
                chart
                    .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                    .or_draw()?
                    .label(style::legend_entry(&s.name, plot_width))
                    .legend(style::legend_square(c));
            }
        }
        // Under each slot what tells its configuration from the others; under each mark of a
        // lone configuration what tells its series from the others. A label wider than its
        // room is shortened with an ellipsis, so that neighbours never overlap.
        let mut under: Vec<(f64, String, u32)> = Vec::new();
        if n > 1 {
            let room = plot_width / n as u32;
            let slots = labels.into_iter().enumerate();
            under.extend(slots.map(|(i, label)| (i as f64, label, room)));
        } else if self.series.len() > 1 {
            let room = (f64::from(plot_width) * share) as u32;
            let names = series_labels(self.series);
            for (j, (s, name)) in self.series.iter().zip(names).enumerate() {
                if find(s, &panel.configs[0], &panel.metric).is_some() {
                    under.push((-0.4 + share * (j as f64 + 0.5), name, room));
                }
            }
        }
        for (x, label, room) in under {
            let (px, py) = chart.backend_coord(&(x, lo));
            root.draw(&Text::new(
                style::fit(&label, room.saturating_sub(6), &style::tick()),
                (px, py + 6),
                style::tick_below(),
            ))
            .or_draw()?;
        }
        if legend {
            style::draw_legend(&mut chart, corner)?;
        }
        Ok(())
    }
}

/// A rectangle in the backend's pixels: left, top, right, bottom.
type Rect = (i32, i32, i32, i32);

/// Pixels around a mark that a legend keeps clear of: a run's dot (radius 2) and a stroke.
const MARK_PAD: i32 = 3;

/// The pixels of the mark that spans `(x0, y0)` to `(x1, y1)` on `chart`, with [`MARK_PAD`].
fn mark_rect<DB: DrawingBackend>(
    chart: &SlotChart<'_, DB>,
    (x0, y0): (f64, f64),
    (x1, y1): (f64, f64),
) -> Rect {
    let (left, top) = chart.backend_coord(&(x0, y1));
    let (right, bottom) = chart.backend_coord(&(x1, y0));
    (
        left - MARK_PAD,
        top - MARK_PAD,
        right + MARK_PAD,
        bottom + MARK_PAD,
    )
}

/// Whether two rectangles share a pixel.
fn overlap(a: Rect, b: Rect) -> bool {
    a.0 <= b.2 && b.0 <= a.2 && a.1 <= b.3 && b.1 <= a.3
}

/// The corners a legend may take, in the order tried: the upper ones, where a box plot's
/// headroom is, then the lower ones.
const CORNERS: [SeriesLabelPosition; 4] = [
    SeriesLabelPosition::UpperRight,
    SeriesLabelPosition::UpperLeft,
    SeriesLabelPosition::LowerRight,
    SeriesLabelPosition::LowerLeft,
];

/// The first of [`CORNERS`] where a legend of `size` pixels on `chart` overlaps none of
/// `marks`.
fn free_corner<DB: DrawingBackend>(
    chart: &SlotChart<'_, DB>,
    size: (i32, i32),
    marks: &[Rect],
) -> Option<SeriesLabelPosition> {
    CORNERS.into_iter().find(|corner| {
        let legend = style::legend_rect(chart.plotting_area(), corner, size);
        !marks.iter().any(|&m| overlap(legend, m))
    })
}

/// The top of a y axis from `lo` on which the value `highest` lies below a legend of `size`
/// pixels in an upper corner of `chart`'s plotting area (of its height): the legend's band
/// above the data. At most three quarters of the height go to the legend, so that the data
/// keeps a quarter however many series the legend lists.
fn top_above<DB: DrawingBackend>(
    chart: &SlotChart<'_, DB>,
    size: (i32, i32),
    lo: f64,
    highest: f64,
) -> f64 {
    let height = f64::from(chart.plotting_area().dim_in_pixel().1);
    let legend = style::legend_rect(
        chart.plotting_area(),
        &SeriesLabelPosition::UpperRight,
        size,
    );
    let base = chart.plotting_area().get_base_pixel().1;
    // The legend's foot below the area's top, and the mark's padding.
    let band = (f64::from(legend.3 - base + 2 * MARK_PAD)).min(0.75 * height);
    // `highest` at `band` pixels below the top: (top - highest) / (top - lo) = band / height.
    (height * highest - band * lo) / (height - band)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::parts;

    fn panel(configs: &[&str]) -> Panel {
        Panel {
            benchmark: "hackbench".into(),
            metric: "time".into(),
            unit: "s".into(),
            configs: configs.iter().map(|c| format!("hackbench:{c}")).collect(),
            parts: parts(configs),
        }
    }

    #[test]
    fn slots_are_labelled_with_what_varies_and_the_caption_says_what_is_shared() {
        let (caption, labels) = slot_labels(&panel(&[
            "groups=4:ipc=pipe:loops=1000",
            "groups=8:ipc=pipe:loops=1000",
        ]));
        assert_eq!(
            caption,
            "hackbench configuration, each with ipc=pipe:loops=1000"
        );
        assert_eq!(labels, ["groups=4", "groups=8"]);
        // Nothing shared: the caption is the benchmark's alone.
        let (caption, labels) = slot_labels(&panel(&["groups=4", "ipc=pipe"]));
        assert_eq!(caption, "hackbench configuration");
        assert_eq!(labels, ["groups=4", "ipc=pipe"]);
        // A configuration of the defaults among others that set an option.
        let (_, labels) = slot_labels(&panel(&["", "groups=8"]));
        assert_eq!(labels, ["defaults", "groups=8"]);
        // One configuration: the caption names it, its marks are labelled by series.
        let (caption, labels) = slot_labels(&panel(&["groups=4:loops=10"]));
        assert_eq!(caption, "hackbench:groups=4:loops=10");
        assert_eq!(labels, [""]);
    }

    #[test]
    fn slots_are_in_the_natural_order_of_their_options() {
        // Run (and stored) in the order a text sort gives: 10 before 2.
        let configs: Vec<(&[(&str, u64)], f64)> = vec![
            (&[("groups", 10)], 10.0),
            (&[("groups", 1)], 1.0),
            (&[("groups", 2)], 2.0),
            (&[("groups", 4)], 4.0),
        ];
        let series = [crate::fixtures::series("k", "hackbench", &configs)];
        let (_, labels) = slot_labels(&panels(&series)[0]);
        assert_eq!(labels, ["groups=1", "groups=2", "groups=4", "groups=10"]);
    }

    /// The pixels (left, top, right, bottom) of every element `tag` of `svg` that
    /// `bounds` reads from the element's attributes.
    fn boxes_of(
        svg: &str,
        tag: &str,
        bounds: impl Fn(&dyn Fn(&str) -> f64, &str) -> [f64; 4],
    ) -> Vec<([f64; 4], String)> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .map(|t| {
                let element = &t[..t.find("/>").unwrap()];
                let attribute = |name: &str| -> f64 {
                    let start = element.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    let end = start + element[start..].find('"').unwrap();
                    element[start..end].parse().unwrap()
                };
                (bounds(&attribute, element), element.to_string())
            })
            .collect()
    }

    /// Panics unless the legend box of `svg` (plotters' light background of it) shares no
    /// pixel with a box, bar, whisker, interval, median or dot; returns the legend's pixels.
    fn assert_legend_clear(svg: &[u8]) -> [f64; 4] {
        let svg = std::str::from_utf8(svg).unwrap();
        let rects = boxes_of(svg, "rect", |a, _| {
            [a("x"), a("y"), a("x") + a("width"), a("y") + a("height")]
        });
        let legends: Vec<[f64; 4]> = rects
            .iter()
            .filter(|(_, e)| e.contains("opacity=\"0.85\" fill=\"#FFFFFF\""))
            .map(|(b, _)| *b)
            .collect();
        assert_eq!(legends.len(), 1, "one legend");
        let legend = legends[0];
        let inside = |b: &[f64; 4]| {
            b[0] >= legend[0] && b[1] >= legend[1] && b[2] <= legend[2] && b[3] <= legend[3]
        };
        let circles = boxes_of(svg, "circle", |a, _| {
            let (x, y, r) = (a("cx"), a("cy"), a("r"));
            [x - r, y - r, x + r, y + r]
        });
        let polylines = boxes_of(svg, "polyline", |_, e| {
            let points = &e[e.find("points=\"").unwrap() + 8..];
            let points = &points[..points.find('"').unwrap()];
            points.split_whitespace().fold(
                [
                    f64::INFINITY,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NEG_INFINITY,
                ],
                |b, p| {
                    let (x, y) = p.split_once(',').unwrap();
                    let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                    [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)]
                },
            )
        });
        let marks: Vec<&([f64; 4], String)> = rects
            .iter()
            .chain(&circles)
            .chain(&polylines)
            // The figure's background, and the legend's own border and squares.
            .filter(|(b, e)| !e.contains("fill=\"#FFFFFF\"") && !inside(b))
            .collect();
        assert!(marks.len() > 20, "{} marks", marks.len());
        for (b, e) in marks {
            let apart =
                b[2] < legend[0] || legend[2] < b[0] || b[3] < legend[1] || legend[3] < b[1];
            assert!(apart, "the legend {legend:?} covers <{e}/> at {b:?}");
        }
        legend
    }

    #[test]
    fn the_legend_takes_a_corner_that_no_mark_reaches() {
        crate::register_font().unwrap();
        let options: [&[(&str, u64)]; 4] = [
            &[("groups", 1)],
            &[("groups", 2)],
            &[("groups", 4)],
            &[("groups", 10)],
        ];
        // The right slot reaches the top (as hackbench's most groups): the upper right corner,
        // where the legend stood, is taken; the upper left is free.
        let series: Vec<Series> = ["kernel=A", "kernel=B", "kernel=C", "kernel=D"]
            .iter()
            .enumerate()
            .map(|(j, name)| {
                let configs: Vec<(&[(&str, u64)], f64)> = options
                    .iter()
                    .zip([1.0, 2.0, 4.0, 10.0])
                    .map(|(o, c)| (*o, c + j as f64 * 0.3))
                    .collect();
                crate::fixtures::series(name, "hackbench", &configs)
            })
            .collect();
        let size = crate::Size::default();
        let svg = crate::box_plot(&series, "t", crate::Format::Svg, size).unwrap();
        let legend = assert_legend_clear(&svg);
        assert!(
            legend[0] < f64::from(size.width) / 2.0,
            "{legend:?} not on the left"
        );
        let svg = crate::bars(&series, "t", crate::Format::Svg, size).unwrap();
        assert_legend_clear(&svg);
    }

    #[test]
    fn where_every_corner_holds_a_mark_the_data_lies_below_the_legend() {
        crate::register_font().unwrap();
        let options: [&[(&str, u64)]; 3] = [&[("groups", 1)], &[("groups", 2)], &[("groups", 4)]];
        // At both ends series at the top and at the bottom of the axis, and a legend of six
        // taller than the headroom above the data.
        let ends = [10.0, 1.0, 10.0, 1.0, 10.0, 1.0];
        let names = [
            "kernel=A", "kernel=B", "kernel=C", "kernel=D", "kernel=E", "kernel=F",
        ];
        let series: Vec<Series> = names
            .into_iter()
            .zip(ends)
            .map(|(name, end)| {
                let configs: Vec<(&[(&str, u64)], f64)> = options
                    .iter()
                    .zip([end, 5.0, end])
                    .map(|(o, c)| (*o, c))
                    .collect();
                crate::fixtures::series(name, "hackbench", &configs)
            })
            .collect();
        let svg = crate::box_plot(&series, "t", crate::Format::Svg, crate::Size::default());
        assert_legend_clear(&svg.unwrap());
    }

    #[test]
    fn series_are_labelled_with_the_tags_that_vary() {
        let series = |names: &[&str]| -> Vec<Series> {
            names
                .iter()
                .map(|n| Series {
                    name: n.to_string(),
                    summaries: Vec::new(),
                })
                .collect()
        };
        assert_eq!(
            series_labels(&series(&["kernel=6.8,host=node7", "kernel=6.9,host=node7"])),
            ["kernel=6.8", "kernel=6.9"]
        );
        assert_eq!(
            series_labels(&series(&["1a2b3c4d kernel=6.8", "5e6f7a8b kernel=6.8"])),
            ["1a2b3c4d", "5e6f7a8b"]
        );
        // A lone series keeps its name.
        assert_eq!(series_labels(&series(&["latest"])), ["latest"]);
    }
}
