//! What box plots and grouped bars share: configurations side by side on the x axis, a slot
//! each, and in every slot a mark per series (a box or a bar), the slot's label under it.
//! Configurations of different benchmarks, metrics or units get panels of their own, one above
//! the other; the first panel carries the legend.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::ConfigSummary;

use crate::style::{self, colour};
use crate::{Draw, OrDraw, PlotError, Series};

/// The chart of one panel: x in slots (configuration `i` is centred on `i`), y in the metric.
pub(crate) type SlotChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Configurations that share a benchmark, metric and unit, drawn on one axis.
pub(crate) struct Panel {
    pub benchmark: String,
    pub metric: String,
    pub unit: String,
    /// Configuration labels (`ConfigSummary::label`), in first-seen order.
    pub configs: Vec<String>,
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
                    });
                    panels.len() - 1
                });
            let panel = &mut panels[at];
            if !panel.configs.contains(&label) {
                panel.configs.push(label);
            }
        }
    }
    panels
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

/// The tick label of a configuration: its options (and loads) without the benchmark's name.
pub(crate) fn short_label(label: &str, benchmark: &str) -> String {
    match label.strip_prefix(benchmark) {
        Some("") => "defaults".to_string(),
        Some(rest) => rest.trim_start_matches(':').trim().to_string(),
        None => label.to_string(),
    }
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
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), lo..hi)
            .or_draw()?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(8)
            .label_style(style::tick())
            .axis_desc_style(style::axis_label())
            .x_desc(format!(
                "{} configuration ({})",
                panel.benchmark,
                self.marks.explained(level)
            ))
            .y_desc(style::with_unit(&panel.metric, &panel.unit))
            .draw()
            .or_draw()?;
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
                    .label(s.name.clone())
                    .legend(style::legend_square(c));
            }
        }
        // Configuration names under their slots, shortened to fit the slot.
        let room = (area.dim_in_pixel().0 as usize / n.max(1)) / 8;
        for (i, label) in panel.configs.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, lo));
            root.draw(&Text::new(
                style::shorten(&short_label(label, &panel.benchmark), room.max(4)),
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

    #[test]
    fn tick_labels_drop_the_benchmark() {
        assert_eq!(short_label("hackbench:groups=4", "hackbench"), "groups=4");
        assert_eq!(short_label("hackbench", "hackbench"), "defaults");
    }
}
