//! The series of interval maxima of a monitoring session (`vernier monitor latency`, OSADL's
//! long-term latency recordings): each measured run's maximum over its CPUs
//! (`LatencySummary::interval_maxima`) against wall-clock time (UTC) when the series overlap in
//! time (one session, or sessions recorded side by side), else against the time since each
//! series' first interval started (each on its own clock, its start in the legend); and the
//! maximum of them, the configuration's worst case, in the legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use vernier_analysis::LatencySummary;
use vernier_report::units::{self, TimeForm, Zone};

use crate::latency::{tick_label, us};
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

/// The unit of a time axis that spans `span_ns` nanoseconds, and nanoseconds per unit: the
/// largest of seconds, minutes, hours and days in which the span is at least 2, so that a
/// 10-minute session reads 0 to 10 min and a week 0 to 7 d, with whole-numbered ticks.
pub(crate) fn time_unit(span_ns: i64) -> (&'static str, f64) {
    units::unit_or_smallest(units::SPAN_NS, span_ns as f64, 2.0)
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
        // Each series on its own clock, from its first interval, unless they overlap in time:
        // sessions recorded hours or days apart are compared by how long they had run, not by
        // the calendar. Each series' first and last interval:
        let (starts, ends): (Vec<i64>, Vec<i64>) = self
            .series
            .iter()
            .map(|(_, s)| {
                let at = s.interval_maxima.iter().map(|m| m.started_at_ns);
                (at.clone().min().unwrap_or(0), at.max().unwrap_or(0))
            })
            .unzip();
        let drawn: Vec<usize> = (0..self.series.len())
            .filter(|&i| !self.series[i].1.interval_maxima.is_empty())
            .collect();
        let wall_clock = drawn.iter().all(|&i| {
            drawn
                .iter()
                .all(|&j| starts[i] <= ends[j] && starts[j] <= ends[i])
        });
        // One clock for all when the series overlap in time: wall-clock time, from the
        // earliest start.
        let first = drawn.iter().map(|&i| starts[i]).min().unwrap_or(0);
        let starts: Vec<i64> = if wall_clock {
            vec![first; starts.len()]
        } else {
            starts
        };
        let span = drawn
            .iter()
            .map(|&i| ends[i] - starts[i])
            .max()
            .unwrap_or(0);
        let (unit, ns_per_unit) = time_unit(span);
        // Per series: its name, its points (time in `unit`, us) and its worst case.
        type Line<'n> = (&'n String, Vec<(f64, f64)>, Option<f64>, String);
        let lines: Vec<Line> = self
            .series
            .iter()
            .zip(&starts)
            .filter(|((_, s), _)| !s.interval_maxima.is_empty())
            .map(|((name, s), &start)| {
                // The wall clock of a series on its own clock: its start, last in its legend
                // entry (shortened first when the entry is too long).
                let from = if wall_clock {
                    String::new()
                } else {
                    format!(", from {}", units::utc_named(start))
                };
                let mut points: Vec<(f64, f64)> = s
                    .interval_maxima
                    .iter()
                    .map(|m| ((m.started_at_ns - start) as f64 / ns_per_unit, m.max_us))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (
                    name,
                    thin::min_max(&points, thin::MAX_LINE_POINTS),
                    s.max_of_maxima_us,
                    from,
                )
            })
            .collect();
        let (mut x1, mut y1) = (0f64, 0f64);
        for (_, points, _, _) in &lines {
            for &(x, y) in points {
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
        let x1 = if x1 > 0.0 { x1 * 1.02 } else { 1.0 };
        let y1 = if y1 > 0.0 { y1 * 1.25 } else { 1.0 };
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            // Room for half the last tick label (a time of day), centred on its tick.
            .margin_right(if wall_clock { 48 } else { 12 })
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..x1, 0f64..y1)
            .or_draw()?;
        let plot_width = chart.plotting_area().dim_in_pixel().0;
        // Wall-clock ticks: the time of day, with the month and day over a day or more.
        let form = if span < 86_400_000_000_000 {
            TimeForm::Clock
        } else {
            TimeForm::MonthMinute
        };
        let clock =
            |x: &f64| units::time(first + (x * ns_per_unit).round() as i64, Zone::Utc, form);
        let x_desc = if wall_clock {
            format!(
                "wall-clock time (UTC; the first interval {})",
                units::utc_named(first)
            )
        } else {
            format!("time since the first interval of each series ({unit})")
        };
        let mut mesh = chart.configure_mesh();
        mesh
            // No minor grid: the major lines are enough to read a value.
            .light_line_style(TRANSPARENT)
            .label_style(style::tick())
            .axis_desc_style(style::axis_label())
            .x_desc(style::axis_caption(&x_desc, plot_width));
        if wall_clock {
            mesh.x_labels(6).x_label_formatter(&clock);
        }
        mesh.y_desc("maximum latency of the interval (us)")
            .y_label_formatter(&|&v| tick_label(v))
            .draw()
            .or_draw()?;
        for (i, (name, points, worst, from)) in lines.iter().enumerate() {
            let c = colour(i);
            let label = match worst {
                Some(w) => format!("{name}: max {}{from}", us(*w)),
                None => format!("{name}{from}"),
            };
            chart
                .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                .or_draw()?
                .label(style::legend_entry(&label, plot_width))
                .legend(style::legend_square(c));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .or_draw()?;
        }
        style::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}

/// `n` intervals of a monitoring session, `every_ns` apart, the maximum growing by 1 us from
/// 20 us.
#[cfg(test)]
pub(crate) fn intervals(n: i64, every_ns: i64) -> LatencySummary {
    LatencySummary {
        runs: n as usize,
        threads: Vec::new(),
        interval_maxima: (0..n)
            .map(|i| vernier_analysis::IntervalMax {
                started_at_ns: 5_000 + i * every_ns,
                ended_at_ns: 5_000 + (i + 1) * every_ns,
                max_us: 20.0 + i as f64,
                cpu: Some(0),
            })
            .collect(),
        max_of_maxima_us: Some(19.0 + n as f64),
        worst: None,
        traces: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_unit_follows_the_span() {
        let s = 1_000_000_000i64;
        assert_eq!(time_unit(0).0, "s");
        assert_eq!(time_unit(90 * s).0, "s");
        assert_eq!(time_unit(119 * s).0, "s");
        assert_eq!(time_unit(120 * s).0, "min");
        assert_eq!(time_unit(10 * 60 * s).0, "min");
        assert_eq!(time_unit(119 * 60 * s).0, "min");
        assert_eq!(time_unit(2 * 3_600 * s).0, "h");
        assert_eq!(time_unit(30 * 3_600 * s).0, "h");
        assert_eq!(time_unit(7 * 86_400 * s).0, "d");
        assert_eq!(time_unit(10 * 60 * s).1, 60e9);
    }

    #[test]
    fn each_series_starts_at_its_own_first_interval() {
        // Two ten-minute sessions, the second started two days later.
        let first = intervals(10, 60_000_000_000);
        let mut later = intervals(10, 60_000_000_000);
        for m in &mut later.interval_maxima {
            m.started_at_ns += 2 * 86_400_000_000_000;
        }
        let svg = maxima(
            &[("a".into(), first), ("b".into(), later)],
            "t",
            Format::Svg,
            Size::default(),
        )
        .unwrap();
        let texts: Vec<String> = crate::fixtures::svg_texts(&svg)
            .into_iter()
            .map(|t| t.text)
            .collect();
        // Minutes, not days: both lines span 0 to 9 min.
        assert!(
            texts.contains(&"time since the first interval of each series (min)".to_string()),
            "{texts:?}"
        );
        // Each series' wall clock in the legend: its start.
        assert!(
            texts.contains(&"b: max 29 us, from 1970-01-03 00:00:00 UTC".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn a_ten_minute_session_is_drawn_in_minutes() {
        let summary = intervals(10, 60_000_000_000);
        let svg = maxima(&[("rt".into(), summary)], "t", Format::Svg, Size::default()).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        // The texts between the SVG's tags.
        let texts: Vec<&str> = svg
            .split('>')
            .filter_map(|t| t.split_once('<').map(|(text, _)| text.trim()))
            .filter(|t| !t.is_empty())
            .collect();
        // The intervals start 5,000 ns after the epoch: wall-clock time from 00:00:00 UTC.
        assert!(
            texts.contains(&"wall-clock time (UTC; the first interval 1970-01-01 00:00:00 UTC)"),
            "{texts:?}"
        );
        // The x ticks are times of day, from the first interval's to about the last one's.
        let clocks: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| t.len() == 8 && t.as_bytes()[2] == b':' && t.as_bytes()[5] == b':')
            .collect();
        assert!(clocks.len() >= 3, "{texts:?}");
        assert_eq!(clocks[0], "00:00:00", "{clocks:?}");
        assert!(clocks.iter().all(|c| *c <= "00:10:00"), "{clocks:?}");
        // The intervals' maxima, 20 to 29 us, on the y axis in plain numbers.
        assert!(texts.iter().any(|t| t.parse::<f64>().is_ok()), "{texts:?}");
    }
}
