//! Grouped bars: per configuration, a bar per series side by side, its height the median of
//! `ConfigSummary` and a whisker its confidence interval (cbenchsuite's hackbench bar charts,
//! PTS's bar per system). Many configurations fit one figure where box plots would crowd;
//! configurations of different benchmarks, metrics or units get panels of their own.

use plotters::prelude::*;
use vernier_analysis::ConfigSummary;

use crate::slots::{find, panels, Panel, SlotChart, SlotFigure, SlotMarks};
use crate::style;
use crate::{render, Format, OrDraw, PlotError, Series, Size};

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
        &SlotFigure {
            series,
            title,
            panels,
            marks: Bars,
        },
        format,
        size,
    )
}

/// A bar from zero to the median, a whisker its interval.
struct Bars;

impl SlotMarks for Bars {
    const WIDTH: f64 = 0.85;

    fn explained(&self, level: f64) -> String {
        format!(
            "bar: median, whisker: its {} interval",
            vernier_model::level_percent(level)
        )
    }

    fn y_range(&self, values: &[f64]) -> (f64, f64) {
        // Bars start at zero, so the axis includes it; medians below zero extend it downwards.
        let (lo, hi) = values
            .iter()
            .fold((0f64, 0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let (_, padded_hi) = style::padded(lo, hi, 0.05);
        // Room above the bars for the legend.
        let hi = padded_hi + (padded_hi - lo) * 0.12;
        let lo = if lo < 0.0 {
            style::padded(lo, hi, 0.05).0
        } else {
            0.0
        };
        (lo, hi)
    }

    fn extent(&self, summary: &ConfigSummary) -> Vec<f64> {
        // The bar stands on zero.
        let base = summary.median.map(|_| 0.0);
        [base, summary.median, summary.ci_low, summary.ci_high]
            .into_iter()
            .flatten()
            .collect()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        chart: &mut SlotChart<'_, DB>,
        summary: &ConfigSummary,
        x: f64,
        width: f64,
        c: RGBColor,
    ) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let Some(m) = summary.median else {
            return Ok(());
        };
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
        Ok(())
    }
}
