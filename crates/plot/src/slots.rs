//! What box plots and grouped bars share: configurations side by side on the x axis, a slot
//! each, and in every slot a mark per series (a box or a bar), the slot's label under it.
//! Configurations of different benchmarks, metrics or units get panels of their own, one above
//! the other; the first panel carries the legend.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vernier_analysis::ConfigSummary;

use crate::labels::{config_parts, distinguish, join_config, name_parts, natural_order};
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
    // Slots in the natural order of their configurations, whatever order the sessions ran
    // them in: groups=1, 2, 4, 10.
    for panel in &mut panels {
        let mut slots: Vec<(String, Vec<String>)> = std::mem::take(&mut panel.configs)
            .into_iter()
            .zip(std::mem::take(&mut panel.parts))
            .collect();
        slots.sort_by(|a, b| natural_order(&a.1, &b.1));
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
        let (lo, hi) = self.marks.y_range(&values);
        // The x axis' caption: what the slots share and what the marks show, on one line when
        // it fits the plotting area (the area less the y labels and the margins), else on two.
        let (caption, labels) = slot_labels(panel);
        let explained = format!("({})", self.marks.explained(level));
        let one_line = format!("{caption} {explained}");
        let y_labels = style::y_label_area(lo, hi);
        let two_lines = style::text_width(&one_line, &style::axis_label())
            > area.dim_in_pixel().0.saturating_sub(y_labels + 2 * MARGIN);
        let mut chart = ChartBuilder::on(area)
            .margin(MARGIN)
            .x_label_area_size(if two_lines { 80 } else { 56 })
            .y_label_area_size(y_labels)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..hi)
            .or_draw()?;
        let plot_width = chart.plotting_area().dim_in_pixel().0;
        chart
            .configure_mesh()
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
        // Each series has its share of the slot's middle 80%, its mark in the share's middle.
        let k = self.series.len().max(1);
        let share = 0.8 / k as f64;
        let width = share * M::WIDTH;
        for (j, s) in self.series.iter().enumerate() {
            let c = colour(j);
            for (i, label) in panel.configs.iter().enumerate() {
                if let Some(summary) = find(s, label, &panel.metric) {
                    let x = i as f64 - 0.4 + share * (j as f64 + 0.5);
                    self.marks.draw(&mut chart, summary, x, width, c)?;
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
            style::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
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
