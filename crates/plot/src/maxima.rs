//! The series of interval maxima of a monitoring session (`vernier monitor latency`, OSADL's
//! long-term latency recordings): each measured run's maximum over its CPUs
//! (`LatencySummary::interval_maxima`) against the time the run started, and the maximum of
//! them, the configuration's worst case, in the legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::LatencySummary;

use crate::latency::us;
use crate::style::{self, colour};
use crate::{render, thin, Draw, Format, OrDraw, PlotError, Size};

/// The interval maxima of each `(name, summary)`, a line each on one axis.
pub fn maxima(
    series: &[(String, LatencySummary)],
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if series.iter().all(|(_, s)| s.interval_maxima.is_empty()) {
        return Err(PlotError::Empty("no interval maxima".into()));
    }
    render(&Maxima { series, title }, format, size)
}

struct Maxima<'a> {
    series: &'a [(String, LatencySummary)],
    title: &'a str,
}

impl Draw for Maxima<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = style::titled(root, self.title)?;
        let start = self
            .series
            .iter()
            .flat_map(|(_, s)| &s.interval_maxima)
            .map(|m| m.started_at_ns)
            .min()
            .unwrap_or(0);
        let hours = |ns: i64| (ns - start) as f64 / 3.6e12;
        // Per series: its name, its points (hours, us) and its worst case.
        type Line<'n> = (&'n String, Vec<(f64, f64)>, Option<f64>);
        let lines: Vec<Line> = self
            .series
            .iter()
            .filter(|(_, s)| !s.interval_maxima.is_empty())
            .map(|(name, s)| {
                let mut points: Vec<(f64, f64)> = s
                    .interval_maxima
                    .iter()
                    .map(|m| (hours(m.started_at_ns), m.max_us))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (
                    name,
                    thin::min_max(&points, thin::MAX_LINE_POINTS),
                    s.max_of_maxima_us,
                )
            })
            .collect();
        let (mut x1, mut y1) = (0f64, 0f64);
        for (_, points, _) in &lines {
            for &(x, y) in points {
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
        let x1 = if x1 > 0.0 { x1 * 1.02 } else { 1.0 };
        let y1 = if y1 > 0.0 { y1 * 1.25 } else { 1.0 };
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..x1, 0f64..y1)
            .or_draw()?;
        chart
            .configure_mesh()
            .label_style(style::tick())
            .axis_desc_style(style::axis_label())
            .x_desc("time since the first interval started (h)")
            .y_desc("maximum latency of the interval (us)")
            .draw()
            .or_draw()?;
        for (i, (name, points, worst)) in lines.iter().enumerate() {
            let c = colour(i);
            let label = match worst {
                Some(w) => format!("{name}: max {}", us(*w)),
                None => (*name).clone(),
            };
            chart
                .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                .or_draw()?
                .label(label)
                .legend(style::legend_square(c));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .or_draw()?;
        }
        style::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}
