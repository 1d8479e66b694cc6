//! A configuration's results over time (`vernier history`, docs/history.md): each session's
//! median with its interval as an error bar, oldest first, and the change points marked by a
//! vertical line labelled with the step's ratio and verdict, coloured by direction.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::{Direction, HistorySeries, Verdict};

use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Size};

/// The series of session medians of `series` with its change points.
pub fn history(
    series: &HistorySeries,
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if series.points.is_empty() {
        return Err(PlotError::Empty(format!(
            "{} on {} has no session with a median",
            series.label(),
            series.host
        )));
    }
    render(&History { series, title }, format, size)
}

struct History<'a> {
    series: &'a HistorySeries,
    title: &'a str,
}

impl Draw for History<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let s = self.series;
        let body = style::titled(root, self.title)?;
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in &s.points {
            for y in [Some(p.median), p.ci_low, p.ci_high].into_iter().flatten() {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
        let n = s.points.len() as f64;
        let (y0, y1) = style::padded(y0, y1, 0.06);
        // Room above the points for the steps' labels.
        let y1 = y1 + (y1 - y0) * 0.15;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(style::y_label_area(y0, y1))
            .build_cartesian_2d(-0.5..n - 0.5, y0..y1)
            .or_draw()?;
        let plot_width = chart.plotting_area().dim_in_pixel().0;
        chart
            .configure_mesh()
            .label_style(style::tick())
            .axis_desc_style(style::axis_label())
            .x_desc(style::axis_caption(
                &format!("session (1 the oldest) on {}", s.host),
                plot_width,
            ))
            .x_label_formatter(&|x| format!("{:.0}", x + 1.0))
            .y_label_formatter(&|v| style::compact(*v, y0, y1))
            .y_desc(format!(
                "median {} (bar: its interval)",
                style::with_unit(&s.metric, &s.unit)
            ))
            .draw()
            .or_draw()?;
        let c = colour(0);
        chart
            .draw_series(s.points.iter().enumerate().filter_map(|(i, p)| {
                let (lo, hi) = p.ci_low.zip(p.ci_high)?;
                Some(PathElement::new(
                    vec![(i as f64, lo), (i as f64, hi)],
                    c.mix(0.6).stroke_width(2),
                ))
            }))
            .or_draw()?;
        chart
            .draw_series(LineSeries::new(
                s.points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i as f64, p.median)),
                c.stroke_width(1),
            ))
            .or_draw()?;
        chart
            .draw_series(
                s.points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| Circle::new((i as f64, p.median), 4, c.filled())),
            )
            .or_draw()?
            .label("session median")
            .legend(style::legend_square(c));
        for step in &s.steps {
            let mark = match (step.direction, step.verdict) {
                (_, Verdict::Equivalent | Verdict::Inconclusive) => style::NEUTRAL,
                (Direction::Regression, _) => style::SLOWER,
                (Direction::Improvement, _) => style::FASTER,
            };
            let x = step.index as f64 - 0.5;
            chart
                .draw_series([PathElement::new(
                    vec![(x, y0), (x, y1)],
                    mark.stroke_width(2),
                )])
                .or_draw()?;
            chart
                .draw_series([Text::new(
                    format!("x{:.3} {}", step.ratio, step.verdict),
                    (x, y1 - (y1 - y0) * 0.04),
                    style::tick().color(&mark),
                )])
                .or_draw()?;
        }
        style::draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
