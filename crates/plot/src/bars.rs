//! Grouped bars: per configuration, a bar per series side by side, its height the median of
//! `ConfigSummary` and a whisker its confidence interval (cbenchsuite's hackbench bar charts,
//! PTS's bar per system). Many configurations fit one figure where box plots would crowd;
//! configurations of different benchmarks, metrics or units get panels of their own.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::boxes::{config_ticks, find, level, panels, Panel};
use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Series, Size};

/// Grouped bars of the medians of `series` titled `title`.
pub fn bars(
    series: &[Series],
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    let panels: Vec<Panel> = panels(series)
        .into_iter()
        .filter(|p| {
            series.iter().any(|s| {
                p.configs
                    .iter()
                    .any(|l| find(s, l, &p.metric).is_some_and(|c| c.median.is_some()))
            })
        })
        .collect();
    if panels.is_empty() {
        return Err(PlotError::Empty(
            "no configuration of the selected sessions has a median".into(),
        ));
    }
    render(
        &Bars {
            series,
            title,
            panels,
        },
        format,
        size,
    )
}

struct Bars<'a> {
    series: &'a [Series],
    title: &'a str,
    panels: Vec<Panel>,
}

impl Draw for Bars<'_> {
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

impl Bars<'_> {
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
        // Bars start at zero, so the axis includes it; medians below zero extend it downwards.
        let (mut lo, mut hi) = (0f64, 0f64);
        for s in self.series {
            for label in &panel.configs {
                if let Some(c) = find(s, label, &panel.metric) {
                    for v in c.median.iter().chain(&c.ci_low).chain(&c.ci_high) {
                        lo = lo.min(*v);
                        hi = hi.max(*v);
                    }
                }
            }
        }
        let (_, padded_hi) = style::padded(lo, hi, 0.05);
        let hi = padded_hi + (padded_hi - lo) * 0.12;
        let lo = if lo < 0.0 {
            style::padded(lo, hi, 0.05).0
        } else {
            0.0
        };
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
                "{} configuration (bar: median, whisker: its {} interval)",
                panel.benchmark,
                vernier_model::level_percent(level)
            ))
            .y_desc(style::with_unit(&panel.metric, &panel.unit))
            .draw()
            .or_draw()?;
        let k = self.series.len().max(1);
        let slot = 0.8 / k as f64;
        let width = slot * 0.85;
        for (j, s) in self.series.iter().enumerate() {
            let c = colour(j);
            for (i, label) in panel.configs.iter().enumerate() {
                let Some(summary) = find(s, label, &panel.metric) else {
                    continue;
                };
                let Some(m) = summary.median else {
                    continue;
                };
                let x = i as f64 - 0.4 + slot * (j as f64 + 0.5);
                let (x0, x1) = (x - width / 2.0, x + width / 2.0);
                chart
                    .draw_series([
                        Rectangle::new([(x0, 0.0), (x1, m)], c.mix(0.75).filled()),
                        Rectangle::new([(x0, 0.0), (x1, m)], c.stroke_width(1)),
                    ])
                    .or_draw()?;
                if let (Some(l), Some(h)) = (summary.ci_low, summary.ci_high) {
                    let cap = width / 4.0;
                    chart
                        .draw_series([
                            PathElement::new(vec![(x, l), (x, h)], BLACK.stroke_width(2)),
                            PathElement::new(vec![(x - cap, l), (x + cap, l)], BLACK),
                            PathElement::new(vec![(x - cap, h), (x + cap, h)], BLACK),
                        ])
                        .or_draw()?;
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
