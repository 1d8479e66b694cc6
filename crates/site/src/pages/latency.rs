//! Latency: per configuration the per-CPU histograms of each series, the interval maxima of
//! monitoring sessions, and the numbers of `show`.

use maud::html;
use vernier_analysis::LatencySummary;
use vernier_plot::{Format, PlotError, Size};

use super::nav;
use crate::html::{self, num};
use crate::Site;

pub fn latency(site: &Site) -> String {
    let body = html! {
        p {
            "Per CPU the histogram of every measured run merged, in 1 us bins with a logarithmic \
             count axis (an empty bin drawn at 0.8), the worst case in the legend, as the OSADL \
             QA Farm draws its latency plots. When a few samples lie far beyond the p99.99 (or \
             p99.9, p99 with fewer samples), the latency axis ends near it and they are a bar \
             of their own at its right. Interval maxima are drawn against the time since each \
             series' first interval."
        }
        @for (i, label) in site.latency.iter().enumerate() {
            @let all = site.latency_of(i);
            h2 { (html::label(label)) }
            (html::figure(&format!("latency/{i}.svg"), &format!("{label}: latency per CPU"), None))
            (html::table(
                &[
                    "series",
                    "CPU",
                    "samples",
                    "min (us)",
                    "p50 (us)",
                    "p99 (us)",
                    "p99.9 (us)",
                    "p99.99 (us)",
                    "max (us)",
                    "missed",
                ],
                &cpu_rows(&all),
                &[2, 3, 4, 5, 6, 7, 8, 9],
            ))
            (traced(&all))
            @if site.has_maxima(i) {
                (html::figure(
                    &format!("latency/{i}-maxima.svg"),
                    &format!("{label}: the maximum of each interval (measured run)"),
                    None,
                ))
                (html::table(
                    &["series", "intervals", "maximum of the maxima (us)"],
                    &maxima_rows(&all),
                    &[1, 2],
                ))
            }
        }
    };
    html::page("", "Latency", &nav(site), &body)
}

/// Per series and CPU the numbers of `show`.
fn cpu_rows(all: &[(String, LatencySummary)]) -> Vec<Vec<String>> {
    all.iter()
        .flat_map(|(name, l)| {
            l.threads.iter().map(move |t| {
                vec![
                    name.clone(),
                    t.label(),
                    t.samples.to_string(),
                    num(Some(t.min_us)),
                    num(t.p50.value()),
                    num(t.p99.value()),
                    num(t.p99_9.value()),
                    num(t.p99_99.value()),
                    num(Some(t.max_us)),
                    // Unknown (`-`) where the source does not count missed periods.
                    t.missed.map_or_else(|| "-".to_string(), |m| m.to_string()),
                ]
            })
        })
        .collect()
}

/// The traced latencies beside the histogram (`latency:trace=US`, docs/why.md "Traces"): per
/// traced sample what the kernel's events say about it, as `show` prints it; nothing without
/// one.
fn traced(all: &[(String, LatencySummary)]) -> maud::Markup {
    let us = |ns: u64| num(Some(ns as f64 / 1_000.0));
    let share = |s: f64| format!("{:.1}%", s * 100.0);
    let rows: Vec<Vec<String>> = all
        .iter()
        .flat_map(|(name, l)| {
            l.traces.iter().map(move |t| {
                let a = &t.analysis;
                let (blocker, blocked, blocked_share) = match a.blocker() {
                    Some(b) => (
                        format!("{} (pid {})", b.comm, b.pid),
                        us(b.ns),
                        share(b.share),
                    ),
                    None => ("none".to_string(), "-".to_string(), "-".to_string()),
                };
                vec![
                    name.clone(),
                    (t.run + 1).to_string(),
                    t.cpu.map_or_else(|| "-".to_string(), |c| format!("CPU{c}")),
                    us(a.latency_ns),
                    a.irq_delay.map_or_else(|| "-".to_string(), |d| us(d.ns)),
                    us(a.irq.ns),
                    us(a.softirq.ns),
                    blocker,
                    blocked,
                    blocked_share,
                ]
            })
        })
        .collect();
    let content = if rows.is_empty() {
        html! {}
    } else {
        html::table(
            &[
                "series",
                "run",
                "CPU",
                "latency (us)",
                "timer IRQ delay (us)",
                "IRQs (us)",
                "softirqs (us)",
                "blocking thread",
                "it ran (us)",
                "share",
            ],
            &rows,
            &[1, 3, 4, 5, 6, 8, 9],
        )
    };
    html::section(
        3,
        None,
        "Traced latencies",
        Some(html! {
            "Each measured run's first sample above the trace threshold, explained from the \
             kernel's events on its CPU as rtla timerlat's auto-analysis explains one: the \
             delay to the timer interrupt, interrupts and softirqs, and the thread that ran \
             instead (`vernier trace` prints the events)."
        }),
        &content,
    )
}

/// Per series its number of intervals and the maximum of their maxima.
fn maxima_rows(all: &[(String, LatencySummary)]) -> Vec<Vec<String>> {
    all.iter()
        .map(|(name, l)| {
            vec![
                name.clone(),
                l.interval_maxima.len().to_string(),
                num(l.max_of_maxima_us),
            ]
        })
        .collect()
}

pub fn latency_figure(site: &Site, i: usize) -> Result<Vec<u8>, PlotError> {
    let panels = site.latency_of(i);
    let size = Size {
        width: 1200,
        height: (80 + 480 * panels.len() as u32).clamp(600, 8000),
    };
    vernier_plot::latency(
        &panels,
        &format!("{}: latency per CPU", site.latency[i]),
        Format::Svg,
        size,
    )
}

pub fn maxima_figure(site: &Site, i: usize) -> Result<Vec<u8>, PlotError> {
    vernier_plot::maxima(
        &site.latency_of(i),
        &format!("{}: interval maxima", site.latency[i]),
        Format::Svg,
        Size::default(),
    )
}
