//! Box plots: per configuration, one box per series side by side (a session, or the sessions a
//! tag selector pools), as cbenchsuite's result plots. The box spans the quartiles, the
//! whiskers reach the furthest run within 1.5 interquartile ranges (Tukey), the thick line is
//! the median of `ConfigSummary`, the thin capped bar right of the box its confidence interval
//! (beside the box, where it hides no run), and every measured run
//! is a dot, so a reader sees the sample size and any second mode. Configurations of
//! different metrics or units get panels of their own, one above the other.

use plotters::prelude::*;
use vernier_analysis::ConfigSummary;

use crate::slots::{panels, SlotChart, SlotFigure, SlotMarks};
use crate::style;
use crate::{render, Format, OrDraw, PlotError, Series, Size};

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
        &SlotFigure {
            series,
            title,
            panels,
            marks: Boxes,
        },
        format,
        size,
    )
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

/// A box of the quartiles with Tukey's whiskers, the median's interval as a narrow bar, the
/// median as a thick line and every run as a dot.
struct Boxes;

impl SlotMarks for Boxes {
    const WIDTH: f64 = 0.7;

    fn explained(&self, level: f64) -> String {
        format!(
            "box: quartiles, bar: the median's {} interval, dots: runs",
            vernier_model::level_percent(level)
        )
    }

    fn y_range(&self, values: &[f64]) -> (f64, f64) {
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let (lo, hi) = style::padded(lo, hi, 0.05);
        // Room above the data for the legend.
        (lo, hi + (hi - lo) * 0.12)
    }

    fn extent(&self, summary: &ConfigSummary) -> Vec<f64> {
        summary
            .values
            .iter()
            .chain(&summary.ci_low)
            .chain(&summary.ci_high)
            .copied()
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
        // The median's interval as a thin bar with caps beside the box, right of it, where it
        // hides no run and no quartile.
        if let (Some(l), Some(h)) = (summary.ci_low, summary.ci_high) {
            let at = x1 + width * 0.12;
            let cap = width * 0.06;
            chart
                .draw_series([
                    PathElement::new(vec![(at, l), (at, h)], BLACK.stroke_width(2)),
                    PathElement::new(vec![(at - cap, l), (at + cap, l)], BLACK.stroke_width(2)),
                    PathElement::new(vec![(at - cap, h), (at + cap, h)], BLACK.stroke_width(2)),
                ])
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
}
