//! Latency histograms as OSADL draws them (RESEARCH.md 1.5): per CPU (measurement thread) the
//! merged histogram of a configuration's measured runs (`vernier_analysis::latency_summary`)
//! as a step line over 1 us bins, counts on a logarithmic axis whose floor, 0.8, stands for an
//! empty bin (OSADL's `yrange [0.8:*]`), and the worst case of each CPU in the legend.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::{LatencySummary, ThreadLatency};

use crate::style::{self, colour};
use crate::{render, Draw, Format, OrDraw, PlotError, Size};

/// Where an empty bin is drawn on the logarithmic count axis.
const FLOOR: f64 = 0.8;

/// Latency histograms, a panel per `(name, summary)`, one above the other.
pub fn latency(
    panels: &[(String, LatencySummary)],
    title: &str,
    format: Format,
    size: Size,
) -> Result<Vec<u8>, PlotError> {
    if panels.iter().all(|(_, s)| s.threads.is_empty()) {
        return Err(PlotError::Empty("no latency histograms".into()));
    }
    render(&Latency { panels, title }, format, size)
}

/// `95 us`, or `95.3 us` when the maximum is not a whole microsecond.
pub(crate) fn us(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0} us")
    } else {
        format!("{v:.1} us")
    }
}

/// The counts of `thread`'s merged histogram in 1 us bins: bin `b` holds [b, b+1) us.
fn bins(thread: &ThreadLatency) -> BTreeMap<u64, u64> {
    let mut bins = BTreeMap::new();
    for &(ns, n) in &thread.histogram.buckets {
        *bins.entry(ns / 1_000).or_insert(0) += n;
    }
    bins
}

/// The step line of `bins` from bin 0 to `last` inclusive: each bin a flat segment at its
/// count (the floor when empty).
fn steps(bins: &BTreeMap<u64, u64>, last: u64) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(2 * last as usize + 2);
    for b in 0..=last {
        let y = bins.get(&b).map_or(FLOOR, |&n| n as f64);
        points.push((b as f64, y));
        points.push((b as f64 + 1.0, y));
    }
    points
}

struct Latency<'a> {
    panels: &'a [(String, LatencySummary)],
    title: &'a str,
}

impl Draw for Latency<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
    where
        DB::ErrorType: 'static,
    {
        let body = style::titled(root, self.title)?;
        let panels: Vec<_> = self
            .panels
            .iter()
            .filter(|(_, s)| !s.threads.is_empty())
            .collect();
        let areas = body.split_evenly((panels.len(), 1));
        for ((name, summary), area) in panels.iter().zip(&areas) {
            let all: Vec<BTreeMap<u64, u64>> = summary.threads.iter().map(bins).collect();
            let last = all
                .iter()
                .filter_map(|b| b.keys().next_back().copied())
                .max()
                .unwrap_or(0);
            let top = all
                .iter()
                .flat_map(|b| b.values().copied())
                .max()
                .unwrap_or(1) as f64;
            let caption = style::panel_caption(name, area.dim_in_pixel().0);
            let mut chart = ChartBuilder::on(area)
                .caption(caption, style::axis_label())
                .margin(12)
                .x_label_area_size(50)
                .y_label_area_size(90)
                .build_cartesian_2d(0f64..(last as f64 + 2.0), (FLOOR..top * 3.0).log_scale())
                .or_draw()?;
            let plot_width = chart.plotting_area().dim_in_pixel().0;
            chart
                .configure_mesh()
                .label_style(style::tick())
                .axis_desc_style(style::axis_label())
                .x_desc("latency (us), 1 us bins")
                .y_desc("samples (log scale)")
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()
                .or_draw()?;
            for (i, (thread, bins)) in summary.threads.iter().zip(&all).enumerate() {
                let c = colour(i);
                chart
                    .draw_series(LineSeries::new(steps(bins, last), c.stroke_width(2)))
                    .or_draw()?
                    .label(style::legend_entry(
                        &format!("{} max {}", thread.label(), us(thread.max_us)),
                        plot_width,
                    ))
                    .legend(style::legend_square(c));
            }
            style::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_bins_sit_on_the_floor_and_steps_are_flat() {
        let bins = BTreeMap::from([(1, 10), (3, 2)]);
        let p = steps(&bins, 3);
        assert_eq!(p.len(), 8);
        assert_eq!(p[0], (0.0, FLOOR));
        assert_eq!(p[2], (1.0, 10.0));
        assert_eq!(p[3], (2.0, 10.0));
        assert_eq!(p[7], (4.0, 2.0));
        assert_eq!(us(95.0), "95 us");
        assert_eq!(us(95.25), "95.2 us");
    }
}
