//! A traced worst-case latency in the terminal (`latency:trace=US`): under the latency table,
//! the largest traced sample of the configuration and what the kernel's events say about it
//! (`vernier_analysis::trace`), each part with its share of the latency, as `rtla timerlat`'s
//! auto-analysis prints it.

use std::fmt::Write as _;

use vernier_analysis::trace::{Part, TraceAnalysis};
use vernier_analysis::LatencySummary;

/// Threads listed after the blocking one.
const OTHER_THREADS: usize = 3;

fn us(ns: u64) -> String {
    format!("{:.1} us", ns as f64 / 1_000.0)
}

fn part(p: Part) -> String {
    format!("{} ({:.1}%)", us(p.ns), p.share * 100.0)
}

/// The lines that explain the largest traced sample of `summary`; empty without one.
pub fn trace_text(summary: &LatencySummary) -> String {
    let Some(worst) = summary.worst_trace() else {
        return String::new();
    };
    let a = &worst.analysis;
    let cpu = worst.cpu.map(|c| format!(" on CPU{c}")).unwrap_or_default();
    let mut out = format!(
        "traced above {}: {} of {} measured runs; the largest, {}{cpu} in measured run {}:\n",
        us(a.threshold_ns),
        summary.traces.len(),
        summary.runs,
        us(a.latency_ns),
        worst.run + 1
    );
    out.push_str(&analysis_lines(a));
    out
}

/// The parts of one analysis, a line each, indented.
pub fn analysis_lines(a: &TraceAnalysis) -> String {
    let mut out = String::new();
    match a.irq_delay {
        Some(d) => {
            let idle = if a.from_idle { ", from idle" } else { "" };
            let _ = writeln!(out, "  timer interrupt after the expiry: {}{idle}", part(d));
        }
        None => out.push_str("  timer interrupt: not in the events\n"),
    }
    let _ = writeln!(
        out,
        "  interrupts {}, softirqs {}{}",
        part(a.irq),
        part(a.softirq),
        if a.idle.ns > 0 {
            format!(", idle {}", part(a.idle))
        } else {
            String::new()
        }
    );
    match a.blocker() {
        Some(b) => {
            let prio = b.prio.map(|p| format!(", prio {p}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  blocking thread: {} (pid {}{prio}) {}",
                b.comm,
                b.pid,
                part(Part {
                    ns: b.ns,
                    share: b.share
                })
            );
        }
        None => out.push_str("  blocking thread: none ran before the thread\n"),
    }
    let others: Vec<String> = a
        .threads
        .iter()
        .skip(1)
        .take(OTHER_THREADS)
        .map(|t| format!("{} (pid {}) {}", t.comm, t.pid, us(t.ns)))
        .collect();
    if !others.is_empty() {
        let more = a.threads.len().saturating_sub(1 + OTHER_THREADS);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let _ = writeln!(out, "  other threads: {}{more}", others.join(", "));
    }
    let back = a
        .return_to_user
        .map_or_else(|| "not in the events".to_string(), part);
    let _ = writeln!(
        out,
        "  switch-in to the clock reading: {back}; not placed by the events: {:.1} us",
        a.unexplained_ns as f64 / 1_000.0
    );
    if !a.absent_events.is_empty() {
        let _ = writeln!(
            out,
            "  events this kernel lacks: {}",
            a.absent_events.join(", ")
        );
    }
    out
}
