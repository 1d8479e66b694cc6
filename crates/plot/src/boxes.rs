//! Box plots: per configuration, one box per series side by side (a session, or the sessions a
//! tag selector pools), as cbenchsuite's result plots. The box spans the quartiles, the
//! whiskers reach the furthest run within 1.5 interquartile ranges (Tukey), the thick line is
//! the median of `ConfigSummary`, the dark bar its confidence interval, and every measured run
//! is a dot, so a reader sees the sample size and any second mode. Configurations of
//! different metrics or units get panels of their own, one above the other.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::ConfigSummary;

use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Series, Size};

/// A box plot of `series` titled `title`.
pub fn box_plot(
    series: &[Series],
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    let panels = panels(series);
    if panels.is_empty() {
        return Err(PlotError::Empty(
            "no configuration of the selected sessions has measured runs".into(),
        ));
    }
    render(
        &Boxes {
            series,
            title,
            panels,
        },
        format,
        size,
    )
}

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
pub(crate) fn level(series: &[Series]) -> f64 {
    series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(|c| c.level)
        .next()
        .unwrap_or(vernier_model::CONFIDENCE_LEVEL)
}

/// Writes each configuration's name of `panel` at its pixel position in `under` (the foot of
/// its slot on the x axis), shortened to fit the slot.
pub(crate) fn config_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    under: &[(i32, i32)],
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let room = (area.dim_in_pixel().0 as usize / panel.configs.len().max(1)) / 8;
    for (label, &(px, py)) in panel.configs.iter().zip(under) {
        root.draw(&Text::new(
            style::shorten(&short_label(label, &panel.benchmark), room.max(4)),
            (px, py + 6),
            style::tick_below(),
        ))
        .or_draw()?;
    }
    Ok(())
}

/// The tick label of a configuration: its options (and loads) without the benchmark's name.
pub(crate) fn short_label(label: &str, benchmark: &str) -> String {
    match label.strip_prefix(benchmark) {
        Some("") => "defaults".to_string(),
        Some(rest) => rest.trim_start_matches(':').trim().to_string(),
        None => label.to_string(),
    }
}

struct Boxes<'a> {
    series: &'a [Series],
    title: &'a str,
    panels: Vec<Panel>,
}

/// Quartiles and whisker ends of `values` (Tukey's 1.5 IQR fences).
fn box_stats(values: &[f64]) -> Option<[f64; 4]> {
    let q1 = vernier_stats::quantile(values, 0.25).ok()?;
    let q3 = vernier_stats::quantile(values, 0.75).ok()?;
    let iqr = q3 - q1;
    let low = values
        .iter()
        .copied()
        .filter(|&v| v >= q1 - 1.5 * iqr)
        .fold(q1, f64::min);
    let high = values
        .iter()
        .copied()
        .filter(|&v| v <= q3 + 1.5 * iqr)
        .fold(q3, f64::max);
    Some([low, q1, q3, high])
}

impl Draw for Boxes<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = root.titled(self.title, style::title()).or_draw()?;
        let areas = body.split_evenly((self.panels.len(), 1));
        let level = level(self.series);
        for (p, (panel, area)) in self.panels.iter().zip(&areas).enumerate() {
            self.draw_panel(root, area, panel, p == 0, level)?;
        }
        Ok(())
    }
}

impl Boxes<'_> {
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
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for s in self.series {
            for label in &panel.configs {
                if let Some(c) = find(s, label, &panel.metric) {
                    for v in c.values.iter().chain(&c.ci_low).chain(&c.ci_high) {
                        lo = lo.min(*v);
                        hi = hi.max(*v);
                    }
                }
            }
        }
        let (lo, hi) = style::padded(lo, hi, 0.05);
        // Room above the data for the legend.
        let hi = hi + (hi - lo) * 0.12;
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
                "{} configuration (box: quartiles, bar: the median's {} interval, dots: runs)",
                panel.benchmark,
                vernier_model::level_percent(level)
            ))
            .y_desc(style::with_unit(&panel.metric, &panel.unit))
            .draw()
            .or_draw()?;
        let k = self.series.len().max(1);
        let slot = 0.8 / k as f64;
        let width = slot * 0.7;
        for (j, s) in self.series.iter().enumerate() {
            let c = colour(j);
            for (i, label) in panel.configs.iter().enumerate() {
                let Some(summary) = find(s, label, &panel.metric) else {
                    continue;
                };
                let x = i as f64 - 0.4 + slot * (j as f64 + 0.5);
                let (x0, x1) = (x - width / 2.0, x + width / 2.0);
                if let Some([low, q1, q3, high]) = box_stats(&summary.values) {
                    chart
                        .draw_series([
                            Rectangle::new([(x0, q1), (x1, q3)], c.mix(0.2).filled()),
                            Rectangle::new([(x0, q1), (x1, q3)], c.stroke_width(1)),
                        ])
                        .or_draw()?;
                    let cap = width / 4.0;
                    chart
                        .draw_series([
                            PathElement::new(vec![(x, q3), (x, high)], c.stroke_width(1)),
                            PathElement::new(vec![(x, q1), (x, low)], c.stroke_width(1)),
                            PathElement::new(vec![(x - cap, high), (x + cap, high)], c),
                            PathElement::new(vec![(x - cap, low), (x + cap, low)], c),
                        ])
                        .or_draw()?;
                }
                if let (Some(l), Some(h)) = (summary.ci_low, summary.ci_high) {
                    let half = width * 0.08;
                    chart
                        .draw_series([Rectangle::new(
                            [(x - half, l), (x + half, h)],
                            c.mix(0.85).filled(),
                        )])
                        .or_draw()?;
                }
                if let Some(m) = summary.median {
                    chart
                        .draw_series([PathElement::new(
                            vec![(x0, m), (x1, m)],
                            BLACK.stroke_width(3),
                        )])
                        .or_draw()?;
                }
                // Every run, spread sideways by the golden ratio so equal values stay visible;
                // beyond `thin::MAX_DOTS` runs an even subsample of them.
                let dots = crate::thin::even(&summary.values, crate::thin::MAX_DOTS);
                chart
                    .draw_series(dots.iter().enumerate().map(|(r, &v)| {
                        let jitter = ((r as f64 * 0.618_034) % 1.0 - 0.5) * width * 0.8;
                        Circle::new((x + jitter, v), 2, c.mix(0.9).filled())
                    }))
                    .or_draw()?;
            }
            if legend {
                chart
                    .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                    .or_draw()?
                    .label(s.name.clone())
                    .legend(style::legend_square(c));
            }
        }
        // Configuration names under their boxes.
        let under: Vec<(i32, i32)> = (0..n)
            .map(|i| chart.backend_coord(&(i as f64, lo)))
            .collect();
        config_ticks(root, area, panel, &under)?;
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
    fn whiskers_stop_at_the_last_run_inside_the_fences() {
        let values = [1.0, 2.0, 3.0, 4.0, 100.0];
        let [low, q1, q3, high] = box_stats(&values).unwrap();
        assert_eq!((low, q1, q3), (1.0, 2.0, 4.0));
        assert_eq!(high, 4.0);
    }

    #[test]
    fn tick_labels_drop_the_benchmark() {
        assert_eq!(short_label("hackbench:groups=4", "hackbench"), "groups=4");
        assert_eq!(short_label("hackbench", "hackbench"), "defaults");
    }
}
