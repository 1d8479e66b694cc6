//! Latency histograms as OSADL draws them (RESEARCH.md 1.5): per CPU (measurement thread) the
//! merged histogram of a configuration's measured runs (`vernier_analysis::latency_summary`)
//! as a step line over 1 us bins, counts on a logarithmic axis whose floor, 0.8, stands for an
//! empty bin (OSADL's `yrange [0.8:*]`), and the worst case of each CPU in the legend. The
//! panels share one latency axis (sessions compared side by side, A above B, read at a glance),
//! which ends near the body of every panel's samples ([`axis_end`]).

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vernier_analysis::{LatencySummary, ThreadLatency};
use vernier_model::histogram::highest_supported_quantile;

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

/// `v` rounded up to two significant digits: 266 to 270, 22,500 to 23,000.
fn round_up(v: u64) -> u64 {
    let mut step = 1;
    while v / step >= 100 {
        step *= 10;
    }
    v.div_ceil(step) * step
}

/// Where the body of `thread`'s samples ends, microseconds: one rule for every CPU whatever
/// its number of samples, the highest quantile its count supports ([`highest_supported_quantile`],
/// the rule by which `show` reports a percentile: 10 samples beyond it), at most the p99.99 and at
/// least the median. 100,000 samples end at their p99.99, 20,000 at their p99.95, 500 at their
/// p98 and 15 at their median, so that a lone outlier of a CPU with few samples no more decides
/// the axis than one of a CPU with many. `None` when that quantile lies among the samples
/// beyond the histogram's range (an imported cyclictest histogram's overflows).
fn body_end(thread: &ThreadLatency) -> Option<f64> {
    let q = highest_supported_quantile(thread.histogram.count).clamp(0.5, 0.9999);
    thread.histogram.quantile_ns(q).map(|ns| ns as f64 / 1e3)
}

/// Where the x axis ends (bins `0..end` are drawn): after the last bin when every CPU's last
/// sample lies within twice the highest [`body_end`] of the panel's CPUs; else a quarter beyond
/// that, rounded, so that a rare outlier (one of 458 ms among 100,000 samples below 200 us)
/// leaves the body readable. The samples beyond are drawn as a bar of their own and the worst
/// case stays in the legend.
fn axis_end(threads: &[ThreadLatency], all: &[BTreeMap<u64, u64>]) -> u64 {
    let last_of = |b: &BTreeMap<u64, u64>| b.keys().next_back().map_or(1, |&k| k + 1);
    let last = all.iter().map(last_of).max().unwrap_or(1);
    let shown = threads
        .iter()
        .zip(all)
        .map(|(t, b)| match body_end(t) {
            Some(v) => v.floor() as u64 + 1,
            None => last_of(b),
        })
        .max()
        .unwrap_or(1);
    if last <= 2 * shown {
        last
    } else {
        round_up(shown + shown.div_ceil(4)).min(last)
    }
}

/// The step line of `bins` over bins `0..end`, each run of bins of equal count (an empty bin
/// at the floor) one flat segment: two points per run rather than per bin, so that a figure of
/// a long, sparse axis stays small.
fn steps(bins: &BTreeMap<u64, u64>, end: u64) -> Vec<(f64, f64)> {
    // Runs as (first bin, count drawn).
    let mut runs: Vec<(u64, f64)> = Vec::new();
    let mut push = |b: u64, y: f64| {
        if runs.last().is_none_or(|&(_, last)| last != y) {
            runs.push((b, y));
        }
    };
    let mut next = 0;
    for (&b, &n) in bins.range(..end) {
        if b > next {
            push(next, FLOOR);
        }
        push(b, n as f64);
        next = b + 1;
    }
    if next < end {
        push(next, FLOOR);
    }
    let mut points = Vec::with_capacity(2 * runs.len());
    for (i, &(b, y)) in runs.iter().enumerate() {
        let to = runs.get(i + 1).map_or(end, |&(next, _)| next);
        points.push((b as f64, y));
        points.push((to as f64, y));
    }
    points
}

/// A tick label of the latency axis: whole numbers without a decimal point.
pub(crate) fn tick_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
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
        let bins_of: Vec<Vec<BTreeMap<u64, u64>>> = panels
            .iter()
            .map(|(_, s)| s.threads.iter().map(bins).collect())
            .collect();
        // One axis for every panel: the widest of their own.
        let end = panels
            .iter()
            .zip(&bins_of)
            .map(|((_, s), all)| axis_end(&s.threads, all))
            .max()
            .unwrap_or(1);
        let shared = if panels.len() > 1 {
            "; one axis for all panels"
        } else {
            ""
        };
        for (((name, summary), area), all) in panels.iter().zip(&areas).zip(&bins_of) {
            // Per CPU the samples beyond the axis.
            let beyond: Vec<u64> = all
                .iter()
                .map(|b| b.range(end..).map(|(_, n)| n).sum())
                .collect();
            let top = all
                .iter()
                .flat_map(|b| b.values().copied())
                .max()
                .unwrap_or(1) as f64;
            // The bar of the samples beyond: a slot right of the axis' end, after a gap.
            let slot = (end as f64 * 0.05).max(1.0);
            let overflow = beyond.iter().any(|&n| n > 0);
            let x_max = if overflow {
                end as f64 + 2.5 * slot
            } else {
                end as f64 + 1.0
            };
            let area = style::captioned(area, name)?;
            let mut chart = ChartBuilder::on(&area)
                .margin(12)
                // Room for half the last tick label, which is centred on the axis' end.
                .margin_right(40)
                .x_label_area_size(50)
                .y_label_area_size(90)
                .build_cartesian_2d(0f64..x_max, (FLOOR..top * 3.0).log_scale())
                .or_draw()?;
            let plot_width = chart.plotting_area().dim_in_pixel().0;
            let x_desc = if overflow {
                format!(
                    "latency (us), 1 us bins{shared}; the bar at the right: samples beyond \
                     {end} us"
                )
            } else {
                format!("latency (us), 1 us bins{shared}")
            };
            let end_f = end as f64;
            chart
                .configure_mesh()
                // No minor grid: the major lines are enough to read a value.
                .light_line_style(TRANSPARENT)
                .label_style(style::tick())
                .axis_desc_style(style::axis_label())
                .x_desc(style::axis_caption(&x_desc, plot_width))
                .x_label_formatter(&|&v| {
                    if v > end_f {
                        String::new()
                    } else {
                        tick_label(v)
                    }
                })
                .y_desc("samples (log scale)")
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()
                .or_draw()?;
            let width = slot / summary.threads.len() as f64;
            for (i, ((thread, bins), &beyond)) in
                summary.threads.iter().zip(all).zip(&beyond).enumerate()
            {
                let c = colour(i);
                let mut label = format!("{} max {}", thread.label(), us(thread.max_us));
                if beyond > 0 {
                    label.push_str(&format!(", {beyond} beyond {end} us"));
                }
                chart
                    .draw_series(LineSeries::new(steps(bins, end), c.stroke_width(2)))
                    .or_draw()?
                    .label(style::legend_entry(&label, plot_width))
                    .legend(style::legend_square(c));
                if beyond > 0 {
                    let x0 = end_f + 1.5 * slot + i as f64 * width;
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x0, FLOOR), (x0 + width, beyond as f64)],
                            c.filled(),
                        )))
                        .or_draw()?;
                }
            }
            if overflow {
                let highest = beyond.iter().copied().max().unwrap_or(1) as f64;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("> {end} us"),
                        (x_max, highest * 2.0),
                        style::tick().pos(Pos::new(HPos::Right, VPos::Bottom)),
                    )))
                    .or_draw()?;
            }
            style::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use vernier_analysis::Percentile;
    use vernier_model::histogram::{supports_quantile, LATENCY};
    use vernier_model::Recording;

    use crate::fixtures::{assert_texts_inside, svg_texts};

    /// CPU `cpu`'s merged histogram of `samples` as (nanoseconds, count), with its high
    /// percentiles as the analysis computes them from the histogram.
    fn thread(cpu: u32, samples: &[(u64, u64)]) -> ThreadLatency {
        let mut r = Recording::new();
        for &(ns, n) in samples {
            r.record_n(ns, n);
        }
        let h = r.finish(LATENCY, cpu, Some(cpu));
        let percentile = |q: f64| match h.quantile_ns(q) {
            Some(ns) if supports_quantile(h.count, q) => Percentile::Value(ns as f64 / 1e3),
            _ => Percentile::TooFewSamples,
        };
        ThreadLatency {
            thread: cpu,
            cpu: Some(cpu),
            samples: h.count,
            min_us: h.min_ns as f64 / 1e3,
            mean_us: h.mean_ns().map(|m| m / 1e3),
            p50: percentile(0.5),
            p99: percentile(0.99),
            p99_9: percentile(0.999),
            p99_99: percentile(0.9999),
            max_us: h.max_ns as f64 / 1e3,
            max_run: 0,
            max_index: h.max_index,
            missed: Some(0),
            overflows: 0,
            histogram: h,
        }
    }

    /// `n` samples from 10 to 199 us, one in each 1 us bin but for 60 us, which holds the
    /// rest, and `outliers` (nanoseconds).
    fn body_of(n: u64, cpu: u32, outliers: &[u64]) -> ThreadLatency {
        let mut samples: Vec<(u64, u64)> = (10..200u64)
            .filter(|&us| us != 60)
            .map(|us| (us * 1_000 + 500, 1))
            .collect();
        samples.push((60_500, n - samples.len() as u64));
        samples.extend(outliers.iter().map(|&ns| (ns, 1)));
        thread(cpu, &samples)
    }

    /// 100,000 samples of [`body_of`] and `outliers`.
    fn body_and(cpu: u32, outliers: &[u64]) -> ThreadLatency {
        body_of(100_000, cpu, outliers)
    }

    fn summary(threads: Vec<ThreadLatency>) -> LatencySummary {
        LatencySummary {
            runs: 1,
            threads,
            interval_maxima: Vec::new(),
            max_of_maxima_us: None,
            worst: None,
            traces: Vec::new(),
        }
    }

    #[test]
    fn runs_of_equal_bins_are_one_segment_and_empty_bins_sit_on_the_floor() {
        let p = steps(&BTreeMap::from([(1, 10), (3, 2)]), 4);
        assert_eq!(
            p,
            [
                (0.0, FLOOR),
                (1.0, FLOOR),
                (1.0, 10.0),
                (2.0, 10.0),
                (2.0, FLOOR),
                (3.0, FLOOR),
                (3.0, 2.0),
                (4.0, 2.0)
            ]
        );
        // Three bins of 10 and a long empty stretch: three segments, not 1,000.
        let p = steps(&BTreeMap::from([(0, 10), (1, 10), (2, 10)]), 1_000);
        assert_eq!(p, [(0.0, 10.0), (3.0, 10.0), (3.0, FLOOR), (1000.0, FLOOR)]);
        // Bins beyond the end are not drawn.
        assert_eq!(
            steps(&BTreeMap::from([(5, 1)]), 2),
            [(0.0, FLOOR), (2.0, FLOOR)]
        );
        assert_eq!(us(95.0), "95 us");
        assert_eq!(us(95.25), "95.2 us");
        assert_eq!(tick_label(20_000.0), "20000");
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(round_up(266), 270);
        assert_eq!(round_up(22_500), 23_000);
        assert_eq!(round_up(99), 99);
    }

    #[test]
    fn the_axis_ends_near_the_body_unless_the_tail_is_close() {
        let outlier = body_and(0, &[458_000_000]);
        let all = vec![bins(&outlier)];
        let end = axis_end(std::slice::from_ref(&outlier), &all);
        assert!((200..=300).contains(&end), "{end}");
        // Without the outlier the axis ends after the last sample.
        let plain = body_and(0, &[]);
        assert_eq!(axis_end(std::slice::from_ref(&plain), &[bins(&plain)]), 200);
        // Too few samples for a p99.99 (20,000): the p99.9 keeps the body readable.
        let fewer = body_of(20_000, 0, &[458_000_000]);
        assert!(fewer.p99_99.value().is_none() && fewer.p99_9.value().is_some());
        let end = axis_end(std::slice::from_ref(&fewer), &[bins(&fewer)]);
        assert!((200..=300).contains(&end), "{end}");
        // Too few samples for any percentile `show` reports: the same rule, the median of 11.
        let few = thread(0, &[(50_000, 10), (458_000_000, 1)]);
        let end = axis_end(std::slice::from_ref(&few), &[bins(&few)]);
        assert!((51..=70).contains(&end), "{end}");
    }

    #[test]
    fn a_cpu_of_few_samples_ends_its_body_by_the_same_rule_as_the_others() {
        // CPU1 measured 500 samples (too few for a p99), one of them 458 ms: it no longer
        // stretches the axis to its worst case while CPU0's outlier is cut.
        let many = body_and(0, &[458_000_000]);
        let few = thread(1, &[(60_500, 499), (458_000_000, 1)]);
        assert!(few.p99.value().is_none());
        let threads = [many, few];
        let all: Vec<BTreeMap<u64, u64>> = threads.iter().map(bins).collect();
        let end = axis_end(&threads, &all);
        assert!((200..=300).contains(&end), "{end}");
        // Only the CPU of few samples, with its outlier: its body, not its worst case.
        let end = axis_end(&threads[1..], &all[1..]);
        assert!((61..=100).contains(&end), "{end}");
        let svg = latency(
            &[("rt".into(), summary(threads.to_vec()))],
            "t",
            Format::Svg,
            Size::default(),
        )
        .unwrap();
        let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
        let cpu1 = texts.iter().find(|t| t.starts_with("CPU1")).unwrap();
        assert!(cpu1.contains("max 458000 us, 1 beyond"), "{cpu1}");
    }

    #[test]
    fn an_outlier_of_458_ms_keeps_the_body_readable_the_figure_small_and_the_max_named() {
        let s = summary(vec![
            body_and(0, &[458_000_000, 3_000_000]),
            body_and(1, &[165_000_000]),
        ]);
        let svg = latency(&[("rt".into(), s)], "t", Format::Svg, Size::default()).unwrap();
        assert!(svg.len() < 500_000, "{} bytes", svg.len());
        assert_texts_inside(&svg, Size::default().width);
        let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
        let ticks: Vec<f64> = texts.iter().filter_map(|t| t.parse().ok()).collect();
        // The x axis' ticks (and the counts' powers of ten) end near the body.
        let x_last = ticks
            .iter()
            .copied()
            .filter(|&v| v < 1_000.0)
            .fold(0.0, f64::max);
        assert!((150.0..=300.0).contains(&x_last), "{ticks:?}");
        assert!(ticks.iter().all(|&v| v < 1_000_000.0), "{ticks:?}");
        assert!(texts.iter().all(|t| !t.ends_with('.')), "{texts:?}");
        let legend = |cpu: &str| texts.iter().find(|t| t.starts_with(cpu)).cloned();
        let cpu0 = legend("CPU0").expect("CPU0 in the legend");
        assert!(
            cpu0.contains("max 458000 us") && cpu0.contains("2 beyond"),
            "{cpu0}"
        );
        let cpu1 = legend("CPU1").expect("CPU1 in the legend");
        assert!(
            cpu1.contains("max 165000 us") && cpu1.contains("1 beyond"),
            "{cpu1}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("> ") && t.ends_with(" us")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.contains("samples beyond")),
            "{texts:?}"
        );
    }

    /// The last x tick of each panel of `svg`, top to bottom: the largest number among the
    /// upright numbers that share a y (a row of ticks under a panel; the count axis has one
    /// tick per y).
    fn last_x_ticks(svg: &[u8]) -> Vec<f64> {
        let mut rows: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for t in svg_texts(svg) {
            if let (false, Ok(v)) = (t.rotated, t.text.parse::<f64>()) {
                rows.entry(t.y.round() as i64).or_default().push(v);
            }
        }
        rows.into_values()
            .filter(|row| row.len() > 2)
            .map(|row| row.into_iter().fold(0.0, f64::max))
            .collect()
    }

    #[test]
    fn panels_compared_share_one_latency_axis() {
        // A's body ends at 200 us, B's at about 60 us: both panels end at A's end.
        let a = summary(vec![body_and(0, &[])]);
        let b = summary(vec![thread(0, &[(20_500, 50_000), (60_500, 50_000)])]);
        let svg = latency(
            &[("kernel=A".into(), a), ("kernel=B".into(), b.clone())],
            "t",
            Format::Svg,
            Size::default(),
        )
        .unwrap();
        let last = last_x_ticks(&svg);
        assert_eq!(last.len(), 2, "{last:?}");
        assert_eq!(last[0], last[1], "{last:?}");
        assert!(last[0] >= 150.0, "{last:?}");
        let texts: Vec<String> = svg_texts(&svg).into_iter().map(|t| t.text).collect();
        assert!(
            texts.iter().any(|t| t.contains("one axis for all panels")),
            "{texts:?}"
        );
        // Alone, B's panel ends near its own body.
        let svg = latency(&[("kernel=B".into(), b)], "t", Format::Svg, Size::default()).unwrap();
        let last = last_x_ticks(&svg);
        assert_eq!(last.len(), 1, "{last:?}");
        assert!(last[0] <= 70.0, "{last:?}");
    }
}
