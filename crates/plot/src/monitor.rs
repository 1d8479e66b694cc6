//! A monitor's time series during the runs of a configuration (`show --series` as a figure):
//! the stored points of one key (`stat.ctxt`, `meminfo.Cached`) of every measured run against
//! the time since the run started, a line per run, a panel per configuration. A counter's
//! points are its increase since the run's first sample, as stored. A line may also stand for
//! a series of many runs (the report site draws each series' median run): its name says so.
//! Panels fill a grid of up to four columns, so that a sweep of many configurations stays a
//! figure of a screen or two.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_model::monitor::SeriesKind;
use vernier_model::StoredConfiguration;

use crate::style::{self, colour};
use crate::thin;
use crate::{render, Draw, Format, OrDraw, PlotError, Size};

/// The runs of one configuration that recorded the key: its panel.
pub struct MonitorTrace {
    /// The panel's caption: the series and the configuration.
    pub name: String,
    /// Per line (a measured run that recorded the key): its legend entry and its points
    /// (seconds since the run started, value).
    pub runs: Vec<(String, Vec<(f64, f64)>)>,
    /// What a line is, for the legend of many (`runs` in "40 of 200 runs drawn").
    pub lines_are: &'static str,
    pub unit: String,
    pub counter: bool,
}

impl MonitorTrace {
    /// The series `key` of `config`'s measured runs; `None` when no run recorded it.
    pub fn of(name: String, config: &StoredConfiguration, key: &str) -> Option<MonitorTrace> {
        let mut unit = String::new();
        let mut counter = false;
        let mut runs = Vec::new();
        for run in config.runs.iter().filter(|r| !r.warmup) {
            let Some(series) = run
                .monitors
                .as_ref()
                .and_then(|m| m.series.iter().find(|s| s.key() == key))
            else {
                continue;
            };
            unit.clone_from(&series.unit);
            counter = series.kind == SeriesKind::Counter;
            let points = series
                .points
                .iter()
                .map(|p| (p.t_ns as f64 / 1e9, p.value))
                .collect();
            runs.push((format!("run {}", run.index + 1), points));
        }
        (!runs.is_empty()).then_some(MonitorTrace {
            name,
            runs,
            unit,
            counter,
            lines_are: "runs",
        })
    }
}

/// Legend entries per run up to this many runs; beyond, one entry says how many.
const MAX_LEGEND_RUNS: usize = 8;

/// Panels of a column before a second column (up to four) is started.
const PANELS_PER_COLUMN: usize = 4;

/// The most columns of panels.
const MAX_COLUMNS: usize = 4;

/// The columns and rows of the grid of `panels` panels: one column up to
/// [`PANELS_PER_COLUMN`], then as many columns (up to [`MAX_COLUMNS`]) as keep each at most
/// that tall, then taller columns.
pub fn monitor_grid(panels: usize) -> (usize, usize) {
    let panels = panels.max(1);
    let columns = panels.div_ceil(PANELS_PER_COLUMN).min(MAX_COLUMNS);
    (columns, panels.div_ceil(columns))
}

/// A monitor figure `width` wide for `panels` panels in their grid ([`monitor_grid`]): each
/// row of panels [`crate::MIN_PANEL_HEIGHT`] high (the height of [`Size::least_height`]).
pub fn monitor_size(width: u32, panels: usize) -> Size {
    Size::for_panels(width, monitor_grid(panels).1)
}

/// The series `key` of each trace, a panel each.
pub fn monitor(
    traces: &[MonitorTrace],
    key: &str,
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if traces.is_empty() {
        return Err(PlotError::Empty(format!("no run recorded '{key}'")));
    }
    render(&Monitor { traces, key, title }, format, size)
}

struct Monitor<'a> {
    traces: &'a [MonitorTrace],
    key: &'a str,
    title: &'a str,
}

impl Draw for Monitor<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = style::titled(root, self.title)?;
        let (columns, rows) = monitor_grid(self.traces.len());
        let areas = body.split_evenly((rows, columns));
        for (trace, area) in self.traces.iter().zip(&areas) {
            let points = trace.runs.iter().flat_map(|(_, p)| p);
            let (mut x1, mut y0, mut y1) = (0f64, f64::INFINITY, f64::NEG_INFINITY);
            for &(x, y) in points {
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
            if !y0.is_finite() {
                (y0, y1) = (0.0, 1.0);
            }
            let (y0, y1) = style::padded(y0, y1, 0.05);
            let y1 = y1 + (y1 - y0) * 0.12;
            let x1 = if x1 > 0.0 { x1 * 1.02 } else { 1.0 };
            let caption = if trace.counter {
                format!(
                    "{}; {}: increase since the run started",
                    trace.name, self.key
                )
            } else {
                trace.name.clone()
            };
            let area = style::captioned(area, &caption)?;
            let mut chart = ChartBuilder::on(&area)
                .margin(12)
                .x_label_area_size(50)
                .y_label_area_size(100)
                .build_cartesian_2d(0f64..x1, y0..y1)
                .or_draw()?;
            let (plot_width, plot_height) = chart.plotting_area().dim_in_pixel();
            chart
                .configure_mesh()
                // No minor grid: it was most of the bytes of a site's monitor figures (a
                // session draws one per key), and the labelled grid lines read the values.
                .light_line_style(TRANSPARENT)
                .label_style(style::tick())
                .axis_desc_style(style::axis_label())
                .x_desc("time since the run started (s)")
                .y_desc(style::axis_caption_with_unit(
                    self.key,
                    &trace.unit,
                    plot_height,
                ))
                .y_label_formatter(&|v| style::compact(*v, y0, y1))
                .draw()
                .or_draw()?;
            let each = trace.runs.len() <= MAX_LEGEND_RUNS;
            // For display only: an even subset of many runs, each line thinned (`thin`).
            let drawn_runs = thin::even(&trace.runs, thin::MAX_RUNS_DRAWN);
            for (i, (name, points)) in drawn_runs.iter().enumerate() {
                let c = if each { colour(i) } else { colour(0) };
                let points = thin::min_max(points, thin::per_line(drawn_runs.len()));
                let drawn = chart
                    .draw_series(LineSeries::new(points, c.stroke_width(2)))
                    .or_draw()?;
                if each {
                    drawn
                        .label(style::legend_entry(name, plot_width))
                        .legend(style::legend_square(c));
                } else if i == 0 {
                    let (shown, all, what) = (drawn_runs.len(), trace.runs.len(), trace.lines_are);
                    let label = if shown < all {
                        format!("{shown} of {all} {what} drawn")
                    } else {
                        format!("{all} {what}")
                    };
                    drawn.label(label).legend(style::legend_square(c));
                }
            }
            style::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::svg_texts;

    #[test]
    fn panels_fill_up_to_four_columns_of_four() {
        let grids: Vec<(usize, usize)> = [0, 1, 4, 5, 8, 9, 16, 20, 40]
            .into_iter()
            .map(monitor_grid)
            .collect();
        assert_eq!(
            grids,
            [
                (1, 1),
                (1, 1),
                (1, 4),
                (2, 3),
                (2, 4),
                (3, 3),
                (4, 4),
                (4, 5),
                (4, 10)
            ]
        );
        // Twenty configurations: five rows, not twenty panels one above the other.
        assert_eq!(monitor_size(1200, 20).height, 80 + 5 * 300);
    }

    #[test]
    fn lines_of_series_are_named_in_the_legend() {
        let trace = |name: &str| MonitorTrace {
            name: name.to_string(),
            runs: vec![
                (
                    "kernel=A (median run of 10)".into(),
                    vec![(0.0, 0.0), (1.0, 5.0)],
                ),
                (
                    "kernel=B (median run of 10)".into(),
                    vec![(0.0, 0.0), (1.0, 7.0)],
                ),
            ],
            unit: "count".into(),
            counter: true,
            lines_are: "series",
        };
        let traces: Vec<MonitorTrace> = (1..=5).map(|g| trace(&format!("groups={g}"))).collect();
        let size = monitor_size(1200, traces.len());
        let svg = monitor(&traces, "stat.ctxt", "stat.ctxt", Format::Svg, size).unwrap();
        let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
        assert_eq!(
            texts
                .iter()
                .filter(|t| t.as_str() == "kernel=B (median run of 10)")
                .count(),
            5,
            "{texts:?}"
        );
    }
}
