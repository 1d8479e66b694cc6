//! The median against a swept option (hackbench groups 1, 2, 4, 8 across kernels, as
//! cbenchsuite's plots): a line per series (and per combination of the other options), each
//! point `ConfigSummary`'s median, the band its confidence interval.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::ConfigSummary;
use vernier_model::OptionValue;

use crate::labels::{config_parts, distinguish, join_config};
use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Series, Size};

/// A point of a line: the option's value, the median and its interval.
type Point = (f64, f64, Option<(f64, f64)>);

/// One line: its legend entry and its points.
struct Line {
    name: String,
    points: Vec<Point>,
}

/// Lines sharing a benchmark, metric and unit.
struct Panel {
    benchmark: String,
    metric: String,
    unit: String,
    /// The other options (and loads) that every configuration of the panel has, named once in
    /// the x axis' caption rather than in every line's legend entry.
    common: Vec<String>,
    lines: Vec<Line>,
}

/// The numeric value of `option` in `c`.
fn x_of(c: &ConfigSummary, option: &str) -> Option<f64> {
    match c.options.get(option)? {
        OptionValue::UInt(v) => Some(*v as f64),
        OptionValue::Float(v) => Some(*v),
        OptionValue::Text(_) => None,
    }
}

/// The numeric options that take several values among the configurations of one benchmark in
/// `series`, in the order they first appear: the candidates for a line's x axis.
pub fn swept_options(series: &[Series]) -> Vec<String> {
    let mut swept: Vec<String> = Vec::new();
    let all: Vec<&ConfigSummary> = series.iter().flat_map(|s| &s.summaries).collect();
    for c in &all {
        for (name, value) in &c.options.0 {
            let numeric = !matches!(value, OptionValue::Text(_));
            let differs = all
                .iter()
                .any(|d| d.benchmark == c.benchmark && d.options.get(name) != Some(value));
            if numeric && differs && !swept.contains(name) {
                swept.push(name.clone());
            }
        }
    }
    swept
}

/// The other options and loads of `c`, the parts of its name without `option`.
fn rest(c: &ConfigSummary, option: &str) -> Vec<String> {
    let mut options = c.options.clone();
    options.0.remove(option);
    config_parts(&options, &c.loads)
}

/// Whether `a` and `b` are drawn in one panel: they share benchmark, metric and unit.
fn same_panel(a: &ConfigSummary, b: &ConfigSummary) -> bool {
    (&a.benchmark, &a.metric, &a.unit) == (&b.benchmark, &b.metric, &b.unit)
}

impl Panel {
    /// Whether `c` is drawn in this panel.
    fn holds(&self, c: &ConfigSummary) -> bool {
        (&self.benchmark, &self.metric, &self.unit) == (&c.benchmark, &c.metric, &c.unit)
    }
}

/// How many panels a line figure of `series` against `option` stands one above the other.
pub fn line_panels(series: &[Series], option: &str) -> usize {
    let mut panels: Vec<&ConfigSummary> = Vec::new();
    let drawn = series.iter().flat_map(|s| &s.summaries);
    for c in drawn.filter(|c| x_of(c, option).is_some() && c.median.is_some()) {
        if !panels.iter().any(|p| same_panel(p, c)) {
            panels.push(c);
        }
    }
    panels.len()
}

/// The median of each configuration of `series` against the numeric option `option`.
pub fn line(
    series: &[Series],
    option: &str,
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    // Every configuration with the option and a median, with its series, x and median.
    let drawn: Vec<(&Series, &ConfigSummary, f64, f64)> = series
        .iter()
        .flat_map(|s| {
            s.summaries
                .iter()
                .filter_map(move |c| Some((s, c, x_of(c, option)?, c.median?)))
        })
        .collect();
    let mut panels: Vec<Panel> = Vec::new();
    for &(s, c, x, m) in &drawn {
        let at = match panels.iter().position(|p| p.holds(c)) {
            Some(at) => at,
            None => {
                let others: Vec<Vec<String>> = drawn
                    .iter()
                    .filter(|(_, d, _, _)| same_panel(c, d))
                    .map(|(_, d, _, _)| rest(d, option))
                    .collect();
                panels.push(Panel {
                    benchmark: c.benchmark.clone(),
                    metric: c.metric.clone(),
                    unit: c.unit.clone(),
                    common: distinguish(&others).0,
                    lines: Vec::new(),
                });
                panels.len() - 1
            }
        };
        // A line is named by its series and the other options that vary in its panel.
        let other: Vec<String> = rest(c, option)
            .into_iter()
            .filter(|p| !panels[at].common.contains(p))
            .collect();
        let name = if other.is_empty() {
            s.name.clone()
        } else {
            format!("{} {}", s.name, join_config(&other))
        };
        let lines = &mut panels[at].lines;
        let i = lines
            .iter()
            .position(|l| l.name == name)
            .unwrap_or_else(|| {
                lines.push(Line {
                    name,
                    points: Vec::new(),
                });
                lines.len() - 1
            });
        let ci = c.ci_low.zip(c.ci_high);
        lines[i].points.push((x, m, ci));
    }
    if panels.is_empty() {
        return Err(PlotError::Empty(format!(
            "no configuration has a numeric option '{option}' and a median"
        )));
    }
    for p in &mut panels {
        for l in &mut p.lines {
            l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    render(
        &Lines {
            panels,
            option,
            title,
        },
        format,
        size,
    )
}

struct Lines<'a> {
    panels: Vec<Panel>,
    option: &'a str,
    title: &'a str,
}

impl Draw for Lines<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = style::titled(root, self.title)?;
        let areas = body.split_evenly((self.panels.len(), 1));
        let mut colours: Vec<String> = Vec::new();
        for (panel, area) in self.panels.iter().zip(&areas) {
            let points = panel.lines.iter().flat_map(|l| &l.points);
            let (mut x0, mut x1, mut y0, mut y1) = (
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
            );
            for &(x, m, ci) in points {
                x0 = x0.min(x);
                x1 = x1.max(x);
                for y in [Some(m), ci.map(|c| c.0), ci.map(|c| c.1)]
                    .into_iter()
                    .flatten()
                {
                    y0 = y0.min(y);
                    y1 = y1.max(y);
                }
            }
            // An option of whole numbers (groups) is ticked at whole numbers only: at most as
            // many ticks as whole numbers the axis spans, so plotters' steps never halve one.
            let whole = panel
                .lines
                .iter()
                .flat_map(|l| &l.points)
                .all(|p| p.0.fract() == 0.0);
            let (x0, x1) = style::padded(x0, x1, 0.04);
            let x_ticks = if whole {
                ((x1 - x0).floor() as usize + 1).clamp(2, 10)
            } else {
                10
            };
            let (y0, y1) = style::padded(y0, y1, 0.06);
            let y1 = y1 + (y1 - y0) * 0.12;
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(56)
                .y_label_area_size(style::y_label_area(y0, y1))
                .build_cartesian_2d(x0..x1, y0..y1)
                .or_draw()?;
            let plot_width = chart.plotting_area().dim_in_pixel().0;
            let x_caption = if panel.common.is_empty() {
                format!("{} {}", panel.benchmark, self.option)
            } else {
                format!(
                    "{} {}, each with {}",
                    panel.benchmark,
                    self.option,
                    join_config(&panel.common)
                )
            };
            chart
                .configure_mesh()
                // No minor grid: the major lines are enough to read a value.
                .light_line_style(TRANSPARENT)
                .label_style(style::tick())
                .axis_desc_style(style::axis_label())
                .x_desc(style::axis_caption(&x_caption, plot_width))
                .x_labels(x_ticks)
                .x_label_formatter(&|v| style::compact(*v, x0, x1))
                .y_label_formatter(&|v| style::compact(*v, y0, y1))
                .y_desc(format!(
                    "median {} (band: its interval)",
                    style::with_unit(&panel.metric, &panel.unit)
                ))
                .draw()
                .or_draw()?;
            // The bands first, translucent, so that no band paints over another series' line.
            for l in &panel.lines {
                // A name keeps its colour in every panel.
                let i = colours
                    .iter()
                    .position(|n| n == &l.name)
                    .unwrap_or_else(|| {
                        colours.push(l.name.clone());
                        colours.len() - 1
                    });
                let c = colour(i);
                let band: Vec<(f64, f64)> = l
                    .points
                    .iter()
                    .filter_map(|&(x, _, ci)| ci.map(|(lo, _)| (x, lo)))
                    .chain(
                        l.points
                            .iter()
                            .rev()
                            .filter_map(|&(x, _, ci)| ci.map(|(_, hi)| (x, hi))),
                    )
                    .collect();
                if band.len() >= 4 {
                    chart
                        .draw_series([Polygon::new(band, c.mix(0.15).filled())])
                        .or_draw()?;
                }
            }
            for l in &panel.lines {
                let i = colours.iter().position(|n| n == &l.name).unwrap_or(0);
                let c = colour(i);
                chart
                    .draw_series(LineSeries::new(
                        l.points.iter().map(|&(x, m, _)| (x, m)),
                        c.stroke_width(2),
                    ))
                    .or_draw()?
                    .label(style::legend_entry(&l.name, plot_width))
                    .legend(style::legend_square(c));
                chart
                    .draw_series(
                        l.points
                            .iter()
                            .map(|&(x, m, _)| Circle::new((x, m), 4, c.filled())),
                    )
                    .or_draw()?;
            }
            style::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}
