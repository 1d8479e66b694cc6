//! Per-call times in the terminal (the `syscall` benchmark), as the kbench write-up prints a
//! kernel function's: one line of figures (`min=72 max=33364 count=100000 ...`, here in
//! nanoseconds and with the p99) and the distribution with its CDF in one graph
//! ([`crate::histogram::bars`]), its last row the calls slower than the p99.

use std::fmt::Write as _;

use vernier_analysis::CallDistribution;

/// The figures and the graph of `d`, bars `width` characters wide.
pub fn call_text(d: &CallDistribution, width: usize) -> String {
    let mut out = String::new();
    let figure = |name: &str, v: Option<u64>| match v {
        Some(v) => format!(" {name}={v}"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "min={} max={} count={}{}{}{}{}{}{} (ns, {} measured run{})",
        d.min_ns,
        d.max_ns,
        d.count,
        figure("p50", d.p50_ns),
        figure("p90", d.p90_ns),
        figure("p95", d.p95_ns),
        figure("p99", d.p99_ns),
        figure("p99.9", d.p99_9_ns),
        figure("mad", d.mad_ns),
        d.runs,
        if d.runs == 1 { "" } else { "s" }
    );
    let mut rows: Vec<(String, u64)> = d
        .rows
        .iter()
        .map(|r| (r.from_ns.to_string(), r.count))
        .collect();
    if d.beyond > 0 {
        let last = d.rows.last().map_or(d.min_ns, |r| r.from_ns + d.step_ns);
        rows.push((format!(">={last}"), d.beyond));
    }
    out.push_str(&crate::histogram::bars(&rows, width));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_analysis::CallRow;

    #[test]
    fn figures_then_rows_with_the_slow_calls_last() {
        let d = CallDistribution {
            runs: 2,
            count: 1000,
            min_ns: 100,
            max_ns: 5000,
            p50_ns: Some(100),
            p90_ns: Some(120),
            p95_ns: Some(120),
            p99_ns: Some(120),
            p99_9_ns: Some(4000),
            mad_ns: Some(10),
            step_ns: 10,
            rows: vec![
                CallRow {
                    from_ns: 100,
                    count: 500,
                    cumulative: 500,
                },
                CallRow {
                    from_ns: 110,
                    count: 490,
                    cumulative: 990,
                },
            ],
            beyond: 10,
        };
        let text = call_text(&d, 10);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "min=100 max=5000 count=1000 p50=100 p90=120 p95=120 p99=120 p99.9=4000 mad=10 (ns, 2 measured runs)"
        );
        assert!(lines[1].contains("share"), "{}", lines[1]);
        assert_eq!(lines[2], "  100 │▒▒▒▒▒     │   500");
        assert_eq!(lines[3], "  110 │▒▒▒▒▒░░░░░│   490");
        assert_eq!(lines[4], ">=120 │░░░░░░░░░░│    10");
        assert_eq!(lines.len(), 5);
    }
}
