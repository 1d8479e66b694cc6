//! Latency in the terminal: the per-CPU table real-time engineers read (samples, min, mean,
//! p50 to p99.99, max, missed periods, overflows) and a histogram in 1 us steps with a
//! logarithmic count axis, one bar per CPU in each row, the way OSADL's latency plots draw it
//! (RESEARCH.md 1.5: linear latency axis in 1 us, logarithmic counts, worst case in the
//! legend).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use vernier_analysis::{LatencySummary, Percentile};

use crate::table::columns;

/// Most occupied rows of the histogram: beyond that, rows hold several microseconds each.
const MAX_ROWS: u64 = 60;
/// Width of one CPU's bar.
const BAR: usize = 24;

/// Microseconds to a tenth: the histograms resolve nanoseconds, cyclictest prints whole
/// microseconds.
fn us(v: f64) -> String {
    format!("{v:.1}")
}

fn percentile(p: Percentile) -> String {
    match p {
        Percentile::Value(v) => us(v),
        Percentile::TooFewSamples => "n too small".into(),
        Percentile::BeyondRange => "overflow".into(),
    }
}

/// The per-CPU table, the interval maxima of a multi-run (monitoring) configuration and the
/// histogram.
pub fn latency_text(summary: &LatencySummary) -> String {
    let mut out = String::new();
    let rows: Vec<Vec<String>> = summary
        .threads
        .iter()
        .map(|t| {
            vec![
                t.label(),
                t.samples.to_string(),
                us(t.min_us),
                t.mean_us.map(us).unwrap_or_else(|| "-".into()),
                percentile(t.p50),
                percentile(t.p99),
                percentile(t.p99_9),
                percentile(t.p99_99),
                us(t.max_us),
                t.missed.map_or_else(|| "-".to_string(), |m| m.to_string()),
                t.overflows.to_string(),
            ]
        })
        .collect();
    out.push_str(&columns(
        &[
            "latency (us)",
            "samples",
            "min",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "p99.99",
            "max",
            "missed",
            "overflows",
        ],
        &rows,
        &[0],
    ));
    if summary
        .threads
        .iter()
        .any(|t| matches!(t.p99_99, Percentile::TooFewSamples))
    {
        out.push_str(
            "n too small: a percentile q needs 10 / (1 - q) samples (p99.99: 100,000), or it is \
             one of the few largest\n",
        );
    }
    if summary.interval_maxima.len() > 1 {
        if let Some(worst) = summary.max_of_maxima_us {
            let maxima: Vec<String> = summary
                .interval_maxima
                .iter()
                .map(|m| us(m.max_us))
                .collect();
            let _ = writeln!(
                out,
                "maximum of {} interval maxima: {} us\ninterval maxima (us, in order): {}",
                summary.interval_maxima.len(),
                us(worst),
                maxima.join(" ")
            );
        }
    }
    if let Some(worst) = &summary.worst {
        out.push_str(&worst_text(worst, summary.runs));
    }
    out.push_str(&crate::trace::trace_text(summary));
    out.push_str(&histogram_text(summary));
    out
}

/// Where the worst case was, and what its CPU did during that run against the other runs.
fn worst_text(worst: &vernier_analysis::WorstCase, runs: usize) -> String {
    let cpu = worst.cpu.map(|c| format!(" on CPU{c}")).unwrap_or_default();
    // Periods skipped before the maximum would put it later, never earlier.
    let when = match (worst.max_index, worst.offset_s) {
        // Rounded down: the offset is a lower bound, and rounding up would overstate it.
        (Some(i), Some(s)) => format!(
            ", sample {i} (at least {:.1} s into it)",
            (s * 10.0).floor() / 10.0
        ),
        (Some(i), None) => format!(", sample {i}"),
        _ => String::new(),
    };
    let mut out = format!(
        "worst case {} us{cpu} in measured run {} of {runs}{when}\n",
        us(worst.max_us),
        worst.run + 1,
    );
    if !worst.activity.is_empty() {
        let rows: Vec<Vec<String>> = worst
            .activity
            .iter()
            .map(|(key, value, others)| {
                vec![
                    key.clone(),
                    crate::format::count_or_sig(*value, 4),
                    others.map_or_else(|| "-".into(), |m| crate::format::count_or_sig(m, 4)),
                ]
            })
            .collect();
        out.push_str(&columns(
            &[
                "during that run (per-CPU monitors)",
                "that run",
                "other runs (median)",
            ],
            &rows,
            &[0],
        ));
    }
    out
}

/// The histogram: one row per microsecond (or, when more than [`MAX_ROWS`] rows are occupied,
/// log-spaced rows: 1 us wide in the body, wider and wider in the tail), a bar per CPU whose
/// length is log10 of the count, empty rows between occupied ones folded into one line.
pub fn histogram_text(summary: &LatencySummary) -> String {
    // Counts per CPU per whole microsecond (truncated, as cyclictest counts).
    let per_cpu: Vec<BTreeMap<u64, u64>> = summary
        .threads
        .iter()
        .map(|t| {
            let mut rows = BTreeMap::new();
            for &(ns, n) in &t.histogram.buckets {
                *rows.entry(ns / 1_000).or_insert(0) += n;
            }
            rows
        })
        .collect();
    let (Some(low), Some(high)) = (
        per_cpu
            .iter()
            .filter_map(|m| m.keys().next())
            .min()
            .copied(),
        per_cpu
            .iter()
            .filter_map(|m| m.keys().last())
            .max()
            .copied(),
    ) else {
        return String::new();
    };
    // Rows of 1 us while they fit; otherwise log-spaced rows, each `ratio` times as wide as
    // the one before (at least 1 us): a noisy machine's tail reaches milliseconds while its
    // body spans a few microseconds, and rows of equal width put the whole body in one row.
    // The smallest ratio whose occupied rows fit in MAX_ROWS is taken.
    let edges_for = |ratio: f64| -> Vec<u64> {
        let mut edges = vec![low];
        while let Some(&last) = edges.last() {
            if last > high {
                break;
            }
            let next = ((last as f64 * ratio).ceil() as u64).max(last + 1);
            edges.push(next);
        }
        edges
    };
    let bin = |edges: &[u64]| -> Vec<BTreeMap<u64, u64>> {
        per_cpu
            .iter()
            .map(|m| {
                let mut rows = BTreeMap::new();
                for (&row, &n) in m {
                    let i = edges.partition_point(|&e| e <= row).saturating_sub(1);
                    *rows.entry(edges[i]).or_insert(0) += n;
                }
                rows
            })
            .collect()
    };
    // The lines the rows take: each occupied row, and one for each run of empty rows between
    // them (folded).
    let lines = |edges: &[u64], rows: &[BTreeMap<u64, u64>]| -> usize {
        let occupied: Vec<bool> = edges
            .iter()
            .map(|e| rows.iter().any(|m| m.contains_key(e)))
            .collect();
        let filled = occupied.iter().filter(|&&o| o).count();
        let gaps = occupied.windows(2).filter(|w| w[0] && !w[1]).count();
        filled + gaps.saturating_sub(1)
    };
    let mut ratio = 1.0;
    let mut edges = edges_for(ratio);
    let mut binned = bin(&edges);
    for candidate in [1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 4.0, 10.0] {
        if lines(&edges, &binned) as u64 <= MAX_ROWS {
            break;
        }
        ratio = candidate;
        edges = edges_for(ratio);
        binned = bin(&edges);
    }
    let largest = binned
        .iter()
        .flat_map(|m| m.values())
        .copied()
        .max()
        .unwrap_or(1);
    let scale = ((largest as f64) + 1.0).log10();
    let legend: Vec<String> = summary
        .threads
        .iter()
        .map(|t| format!("{} max {} us", t.label(), us(t.max_us)))
        .collect();
    let rows_text = if ratio == 1.0 {
        "1 us per row".to_string()
    } else {
        // The first row wider than 1 us: below it every row is 1 us wide.
        let widening = edges
            .windows(2)
            .find(|w| w[1] - w[0] > 1)
            .map_or(low, |w| w[0]);
        let growth = format!(
            "{:.0}% wider than the one before (each row's range on its left)",
            (ratio - 1.0) * 100.0
        );
        if widening > low {
            format!("rows 1 us wide up to {widening} us, then each {growth}")
        } else {
            format!("rows from {low} us, each {growth}")
        }
    };
    let mut out = format!(
        "\nlatency histogram, {rows_text}, log10 count bars ({})\n",
        legend.join(", ")
    );
    let label_width = edges
        .windows(2)
        .map(|w| row_label(w[0], w[1] - w[0]).chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    let mut empty_run = 0u64;
    for w in edges.windows(2) {
        let (row, step) = (w[0], w[1] - w[0]);
        let counts: Vec<u64> = binned
            .iter()
            .map(|m| m.get(&row).copied().unwrap_or(0))
            .collect();
        if counts.iter().all(|&c| c == 0) {
            empty_run += step;
        } else {
            if empty_run > 0 {
                let _ = writeln!(out, "{:>label_width$} ⋮ {} empty", "", plural(empty_run));
                empty_run = 0;
            }
            let mut line = format!("{:>label_width$} │", row_label(row, step));
            for &c in &counts {
                let len = if c == 0 {
                    0
                } else {
                    // At least one cell for a single sample: a worst case must be visible.
                    (((c as f64 + 1.0).log10() / scale) * BAR as f64)
                        .round()
                        .max(1.0) as usize
                };
                let _ = write!(line, " {:<BAR$} {:>9} │", "█".repeat(len.min(BAR)), c);
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

fn row_label(row: u64, step: u64) -> String {
    if step == 1 {
        format!("{row} us")
    } else {
        format!("{row}-{}", row + step - 1)
    }
}

fn plural(us: u64) -> String {
    if us == 1 {
        "1 us".into()
    } else {
        format!("{us} us")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_analysis::{ThreadLatency, WorstCase};

    #[test]
    fn the_time_of_the_worst_case_is_a_lower_bound_rounded_down() {
        // Sample 7272 of a 200 us period: 1.4544 s, which must not read as 1.5 s.
        let worst = WorstCase {
            max_us: 90.0,
            cpu: Some(1),
            run: 0,
            max_index: Some(7272),
            offset_s: Some(7272.0 * 200e-6),
            activity: Vec::new(),
        };
        let text = worst_text(&worst, 3);
        assert!(
            text.contains("sample 7272 (at least 1.4 s into it)"),
            "{text}"
        );
    }
    use vernier_model::histogram::LATENCY;
    use vernier_model::Recording;

    fn thread(cpu: u32, samples: &[(u64, u64)]) -> ThreadLatency {
        let mut r = Recording::new();
        for &(ns, n) in samples {
            r.record_n(ns, n);
        }
        let h = r.finish(LATENCY, cpu, Some(cpu));
        ThreadLatency {
            thread: cpu,
            cpu: Some(cpu),
            samples: h.count,
            min_us: h.min_ns as f64 / 1e3,
            mean_us: h.mean_ns().map(|m| m / 1e3),
            p50: Percentile::Value(4.0),
            p99: Percentile::Value(6.0),
            p99_9: Percentile::TooFewSamples,
            p99_99: Percentile::TooFewSamples,
            max_us: h.max_ns as f64 / 1e3,
            max_run: 0,
            max_index: h.max_index,
            missed: Some(0),
            overflows: 0,
            histogram: h,
        }
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
    fn rows_are_whole_microseconds_with_empty_runs_folded_and_bars_per_cpu() {
        let s = summary(vec![
            thread(0, &[(4_200, 10_000), (4_900, 5), (5_100, 100), (30_000, 1)]),
            thread(1, &[(5_000, 1_000)]),
        ]);
        let text = histogram_text(&s);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "latency histogram, 1 us per row, log10 count bars (CPU0 max 30.0 us, CPU1 max 5.0 us)"
        );
        // 4 us: 10,005 samples of CPU0 (4.2 and 4.9 truncate to 4), none of CPU1.
        assert!(lines[2].starts_with("    4 us │ ████████████████████████     10005 │"));
        assert!(lines[2].ends_with("0 │"), "{}", lines[2]);
        assert!(lines[3].starts_with("    5 us │"), "{}", lines[3]);
        assert!(lines[3].contains("100 │") && lines[3].ends_with("1000 │"));
        assert_eq!(lines[4], "         ⋮ 24 us empty");
        // A single sample still shows.
        assert!(lines[5].starts_with("   30 us │ ██ "), "{}", lines[5]);
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn a_wide_range_is_binned_and_says_so() {
        // A sparse tail keeps 1 us rows; 200 occupied microseconds do not fit.
        let s = summary(vec![thread(0, &[(3_000, 50), (900_000, 1)])]);
        assert!(histogram_text(&s).contains("1 us per row"));
        let dense: Vec<(u64, u64)> = (0..200).map(|i| (3_000 + 1_000 * i, 1 + i)).collect();
        let text = histogram_text(&summary(vec![thread(0, &dense)]));
        assert!(
            text.contains("rows 1 us wide up to 21 us, then each 5% wider"),
            "{text}"
        );
        assert!(text.contains("\n    3 us │"), "{text}");
        assert!(text.contains("\n 201-211 │"), "{text}");
        assert!(text.lines().count() <= 2 + MAX_ROWS as usize, "{text}");
    }

    #[test]
    fn a_noisy_machine_keeps_its_body_in_narrow_rows() {
        // 99.9% of the samples between 14 and 60 us, a tail to 10 ms: equal rows of 500 us
        // would hold the whole body in one row.
        let mut samples: Vec<(u64, u64)> = (14..60).map(|us| (us * 1_000, 2_000)).collect();
        samples.extend((1..=40).map(|i| (250_000 * i, 1)));
        let text = histogram_text(&summary(vec![thread(0, &samples)]));
        assert!(text.lines().count() <= 2 + MAX_ROWS as usize, "{text}");
        let body_rows = text
            .lines()
            .filter(|l| {
                l.contains("│ █")
                    && l.trim_start().split(' ').next().is_some_and(|r| {
                        r.split('-')
                            .next()
                            .and_then(|v| v.parse::<u64>().ok())
                            .is_some_and(|v| v < 60)
                    })
            })
            .count();
        assert!(body_rows >= 10, "the body is in {body_rows} rows: {text}");
        assert!(text.contains("% wider than the one before"), "{text}");
        // A body that starts wide says so, without a 1 us part it does not have.
        let wide: Vec<(u64, u64)> = (0..100).map(|i| (15_000 + 7_000 * i, 10)).collect();
        let text = histogram_text(&summary(vec![thread(0, &wide)]));
        assert!(text.contains("rows from 15 us, each "), "{text}");
    }

    #[test]
    fn the_table_says_when_a_percentile_lacks_samples() {
        let text = latency_text(&summary(vec![thread(0, &[(4_000, 10)])]));
        assert!(
            text.starts_with("latency (us)  samples  min  mean  p50  p99"),
            "{text}"
        );
        assert!(text.contains("n too small"), "{text}");
    }
}
