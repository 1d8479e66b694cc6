//! Monitor data of a configuration as text: the per-run summaries across its measured runs
//! (computed by [`vernier_analysis::monitors`]), and one series of every run.

use std::collections::BTreeMap;

use vernier_analysis::monitors::{monitor_summaries, MonitorSummary, RecordedKey};
use vernier_model::monitor::SeriesKind;
use vernier_model::StoredConfiguration;

use crate::format::sig;
use crate::table::columns;

/// The monitor keys that a compact summary beside a result shows, in this order, where they
/// were recorded: what a scheduler, memory or I/O result most often depends on.
pub const KEY_MONITORS: &[&str] = &[
    // Context switches: the work of the scheduler benchmarks (hackbench, pipe).
    "stat.ctxt",
    // Where the CPU time went: the benchmark's own work, the kernel's on its behalf.
    "stat.user_ns",
    // User time of niced processes, which the kernel counts apart from user time: a benchmark
    // run under `nice` shows its work here and none under user (proc(5), /proc/stat).
    "stat.nice_ns",
    "stat.system_ns",
    // Time a hypervisor gave to other guests: noise a virtual machine cannot see otherwise.
    "stat.steal_ns",
    // Runnable tasks: how many competed for the CPUs.
    "stat.procs_running",
    // The page cache, which file-heavy runs (a kernel build) fill.
    "meminfo.Cached_bytes",
    // Major page faults: runs that waited for I/O to page in.
    "vmstat.pgmajfault",
    // The benchmark's own processes, counted by perf events.
    "perf.context_switches",
    "perf.cpu_migrations",
];

/// How the values of a monitor key read in a row or column: times in ns or us as s, ms or us,
/// bytes as GiB, MiB or KiB (the largest unit in which the largest value is at least 1), a
/// counter of events as a whole number, anything else with four significant digits.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// The unit the formatted numbers are in; empty for a count.
    pub unit: String,
    divisor: f64,
    whole: bool,
}

impl Scale {
    /// The scale for values of a series of `unit` and `kind` (as the monitor recorded them),
    /// chosen by the largest of `values`.
    pub fn of(unit: &str, kind: SeriesKind, values: &[f64]) -> Scale {
        const NS: &[(&str, f64)] = &[("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)];
        const US: &[(&str, f64)] = &[("s", 1e6), ("ms", 1e3), ("us", 1.0)];
        const BYTES: &[(&str, f64)] = &[
            ("GiB", 1_073_741_824.0),
            ("MiB", 1_048_576.0),
            ("KiB", 1024.0),
            ("B", 1.0),
        ];
        let steps = match unit {
            "ns" => NS,
            "us" => US,
            "bytes" => BYTES,
            "count" => {
                return Scale {
                    unit: String::new(),
                    divisor: 1.0,
                    // A gauge's time-weighted mean of a count (runnable tasks) has a fraction.
                    whole: kind == SeriesKind::Counter,
                };
            }
            other => {
                return Scale {
                    unit: other.to_string(),
                    divisor: 1.0,
                    whole: false,
                }
            }
        };
        let largest = values
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let (unit, divisor) = steps
            .iter()
            .copied()
            .find(|(_, d)| largest >= *d)
            .unwrap_or(steps[steps.len() - 1]);
        Scale {
            unit: unit.to_string(),
            divisor,
            whole: false,
        }
    }

    /// The scale that shows a summary's median, minimum and maximum.
    pub fn of_summary(s: &MonitorSummary) -> Scale {
        Scale::of(&s.unit, s.kind, &[s.median, s.min, s.max])
    }

    /// The scale that shows the value of a key constant over every run (0 when it is not).
    pub fn of_constant(k: &RecordedKey) -> Scale {
        Scale::of(&k.unit, k.kind, &[k.constant.unwrap_or(0.0)])
    }

    /// `v` in this scale, without the unit.
    pub fn format(&self, v: f64) -> String {
        if self.whole && v.is_finite() {
            format!("{:.0}", v.round())
        } else {
            sig(v / self.divisor, 4)
        }
    }

    /// A column's heading for `key`: the key without its unit suffix (`_ns`, `_bytes`, `_us`)
    /// and with this scale's unit (`stat.system (s)`, `meminfo.Cached (GiB)`, `stat.ctxt`).
    pub fn heading(&self, key: &str) -> String {
        let name = ["_ns", "_bytes", "_us"]
            .iter()
            .find_map(|suffix| key.strip_suffix(suffix))
            .unwrap_or(key);
        if self.unit.is_empty() {
            name.to_string()
        } else {
            format!("{name} ({})", self.unit)
        }
    }
}

/// What the monitors could not record (monitor or counter -> reason) and how they failed.
pub fn monitor_notes(config: &StoredConfiguration) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        if let Some(m) = &run.monitors {
            for (what, why) in &m.unsupported {
                let note = format!("unsupported: {what}: {why}");
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
            for f in &m.failures {
                notes.push(format!(
                    "run {}: monitor {} failed at {} ms: {}",
                    run.index + 1,
                    f.monitor,
                    f.t_ns / 1_000_000,
                    f.message
                ));
            }
        }
    }
    notes
}

/// A per-CPU key `monitor.cpu<N>.[item.]column` (`softirqs.cpu1.TIMER`,
/// `cpuidle.cpu1.C6.usage`, `interrupts.cpu1.irq.36:virtio1-req.0`): (monitor, cpu, item,
/// column). The item is one word; the column may contain dots (IRQ handler names do).
fn per_cpu_key(key: &str) -> Option<(&str, u32, Option<&str>, &str)> {
    let (monitor, rest) = key.split_once('.')?;
    let (cpu, rest) = rest.split_once('.')?;
    let cpu = cpu.strip_prefix("cpu")?.parse().ok()?;
    Some(match rest.split_once('.') {
        Some((item, column)) => (monitor, cpu, Some(item), column),
        None => (monitor, cpu, None, rest),
    })
}

/// The table of [`monitor_summaries`] as text: one row per key (median, min and max over the
/// runs), except that per-CPU keys (`monitor.cpu<N>...`) make a table per monitor with a row
/// per CPU (and item, such as an idle state) and a column per metric, so that the CPU of a
/// latency worst case can be read across.
pub fn monitor_text(config: &StoredConfiguration) -> String {
    let summaries = monitor_summaries(config);
    if summaries.is_empty() {
        return "  no monitor data\n".to_string();
    }
    let (per_cpu, flat): (Vec<&MonitorSummary>, Vec<&MonitorSummary>) = summaries
        .iter()
        .partition(|s| per_cpu_key(&s.key).is_some());
    let mut out = String::new();
    let indent = |out: &mut String, table: &str, note: &str| {
        for (i, line) in table.lines().enumerate() {
            out.push_str("  ");
            out.push_str(line);
            if i == 0 {
                out.push_str(note);
            }
            out.push('\n');
        }
    };
    if !flat.is_empty() {
        let rows: Vec<[String; 5]> = flat
            .iter()
            .map(|s| {
                let scale = Scale::of_summary(s);
                [
                    s.key.clone(),
                    scale.unit.clone(),
                    scale.format(s.median),
                    scale.format(s.min),
                    scale.format(s.max),
                ]
            })
            .collect();
        let table = columns(
            &["monitor.metric", "unit", "median", "min", "max"],
            &rows,
            &[0, 1],
        );
        indent(&mut out, &table, "  (per run: counter deltas, gauge means)");
    }
    for (monitor, table) in per_cpu_tables(config, &per_cpu) {
        out.push_str(&format!(
            "  {monitor} per CPU (median of the runs; one series: --series {monitor}.ROW.COLUMN):\n"
        ));
        indent(&mut out, &table, "");
    }
    for note in monitor_notes(config) {
        out.push_str(&format!("  {note}\n"));
    }
    out
}

/// One table per monitor with per-CPU keys: rows `cpu<N>` or `cpu<N>.<item>` in CPU order,
/// columns in the order the monitor recorded them, cells the median over the runs.
fn per_cpu_tables(
    config: &StoredConfiguration,
    summaries: &[&MonitorSummary],
) -> Vec<(String, String)> {
    // The order in which the series were recorded, for items and columns.
    let mut position: BTreeMap<String, usize> = BTreeMap::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        for s in run.monitors.iter().flat_map(|m| &m.series) {
            let n = position.len();
            position.entry(s.key()).or_insert(n);
        }
    }
    let first_seen = |key: &str| position.get(key).copied().unwrap_or(usize::MAX);
    /// The cells of one monitor's table, keyed by (cpu, recorded position of the item, item),
    /// and its columns with their recorded position.
    #[derive(Default)]
    struct CpuTable<'a> {
        cells: BTreeMap<(u32, usize, Option<&'a str>), BTreeMap<&'a str, f64>>,
        columns: Vec<(usize, &'a str)>,
    }
    // Rows with and without an item make separate tables (`interrupts`: the totals of each
    // CPU, and with per-cpu=on its IRQ lines).
    let mut monitors: BTreeMap<(&str, bool), CpuTable<'_>> = BTreeMap::new();
    for s in summaries {
        let Some((monitor, cpu, item, column)) = per_cpu_key(&s.key) else {
            continue;
        };
        let CpuTable {
            cells,
            columns: cols,
        } = monitors.entry((monitor, item.is_some())).or_default();
        let at = first_seen(&s.key);
        // Items of a CPU in recorded order: the position of the item's first key.
        let item_at = cells
            .keys()
            .find(|(c, _, i)| *c == cpu && *i == item)
            .map_or(at, |(_, p, _)| *p);
        cells
            .entry((cpu, item_at, item))
            .or_default()
            .insert(column, s.median);
        match cols.iter_mut().find(|(_, c)| *c == column) {
            Some(c) => c.0 = c.0.min(at),
            None => cols.push((at, column)),
        }
    }
    monitors
        .into_iter()
        .map(|((monitor, _), table)| {
            let CpuTable {
                cells,
                columns: mut cols,
            } = table;
            cols.sort();
            let mut headers = vec!["cpu"];
            headers.extend(cols.iter().map(|(_, c)| *c));
            let rows: Vec<Vec<String>> = cells
                .iter()
                .map(|((cpu, _, item), values)| {
                    let mut row = vec![match item {
                        Some(item) => format!("cpu{cpu}.{item}"),
                        None => format!("cpu{cpu}"),
                    }];
                    row.extend(cols.iter().map(|(_, c)| {
                        values
                            .get(c)
                            .map_or_else(|| "-".to_string(), |v| sig(*v, 4))
                    }));
                    row
                })
                .collect();
            (monitor.to_string(), columns(&headers, &rows, &[0]))
        })
        .collect()
}

/// One series (`monitor.metric`) of every measured run: `run t_ms value` lines.
/// Returns `None` when no run recorded it.
pub fn series_text(config: &StoredConfiguration, key: &str) -> Option<String> {
    let mut out = String::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        let Some(series) = run
            .monitors
            .as_ref()
            .and_then(|m| m.series.iter().find(|s| s.key() == key))
        else {
            continue;
        };
        for p in &series.points {
            out.push_str(&format!(
                "  {:>4}  {:>10.1}  {}\n",
                run.index + 1,
                p.t_ns as f64 / 1e6,
                sig(p.value, 6)
            ));
        }
    }
    (!out.is_empty()).then(|| format!("   run        t_ms  value\n{out}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_model::monitor::SeriesKind::Counter;
    use vernier_testkit::{monitored_configuration, Series};

    /// Three runs whose `stat.ctxt` rose by 10, 30 and 20, and which could not read schedstat.
    fn config() -> StoredConfiguration {
        let mut c = monitored_configuration(
            &[10.0, 30.0, 20.0].map(|ctxt| vec![("stat", "ctxt", Counter, ctxt)]),
        );
        for run in &mut c.runs {
            if let Some(m) = run.monitors.as_mut() {
                m.unsupported
                    .insert("schedstat".into(), "/proc/schedstat is absent".into());
            }
        }
        c
    }

    #[test]
    fn summaries_over_runs() {
        let text = monitor_text(&config());
        assert!(text.contains("stat.ctxt"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("  monitor.metric  unit  median"),
            "{text}"
        );
        // A counter of events reads as a whole number, with no unit.
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["stat.ctxt", "20", "10", "30"],
            "{text}"
        );
        assert_eq!(text.matches("unsupported: schedstat").count(), 1, "{text}");
    }

    /// `series` after a `stat.ctxt` that rose by 1.
    fn with_ctxt(series: Vec<Series<'static>>) -> Vec<Series<'static>> {
        let mut all = vec![("stat", "ctxt", Counter, 1.0)];
        all.extend(series);
        all
    }

    #[test]
    fn per_cpu_keys_make_a_table_per_monitor_with_a_row_per_cpu() {
        use SeriesKind::{Counter, Gauge};
        let series = |k: f64| {
            vec![
                ("interrupts", "cpu0.irq_total", Counter, 100.0 * k),
                ("interrupts", "cpu1.irq_total", Counter, 300.0 * k),
                ("softirqs", "cpu0.TIMER", Counter, 10.0 * k),
                ("softirqs", "cpu0.NET_RX", Counter, 2.0 * k),
                ("softirqs", "cpu10.TIMER", Counter, 30.0 * k),
                ("softirqs", "cpu10.NET_RX", Counter, 4.0 * k),
                ("cpuidle", "cpu0.POLL.usage", Counter, 5.0 * k),
                ("cpuidle", "cpu0.POLL.latency_us", Gauge, 0.0),
                ("cpuidle", "cpu0.C6.usage", Counter, 50.0 * k),
                ("cpuidle", "cpu0.C6.latency_us", Gauge, 133.0),
                ("cpuidle", "cpu2.POLL.usage", Counter, 7.0 * k),
                ("interrupts", "cpu1.irq.LOC", Counter, 40.0 * k),
                ("interrupts", "cpu1.irq.36:virtio1-req.0", Counter, 8.0 * k),
            ]
        };
        let c = monitored_configuration(&[with_ctxt(series(1.0)), with_ctxt(series(3.0))]);
        let text = monitor_text(&c);
        // The flat table keeps stat.ctxt; the per-CPU keys are not rows of it.
        assert!(text.contains("stat.ctxt"), "{text}");
        assert!(!text.contains("softirqs.cpu0.TIMER"), "{text}");
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        let find = |first: &str| {
            lines
                .iter()
                .position(|l| l.first() == Some(&first))
                .unwrap_or_else(|| panic!("no line {first}: {text}"))
        };
        // Columns in recorded order, CPUs in numeric order, medians over the runs.
        let soft = find("softirqs");
        assert_eq!(lines[soft + 1][..3], ["cpu", "TIMER", "NET_RX"], "{text}");
        assert_eq!(lines[soft + 2], ["cpu0", "20.00", "4.000"], "{text}");
        assert_eq!(lines[soft + 3], ["cpu10", "60.00", "8.000"], "{text}");
        let idle = find("cpuidle");
        assert_eq!(
            lines[idle + 1][..3],
            ["cpu", "usage", "latency_us"],
            "{text}"
        );
        assert_eq!(lines[idle + 2], ["cpu0.POLL", "10.00", "0"], "{text}");
        assert_eq!(lines[idle + 3], ["cpu0.C6", "100.0", "133.0"], "{text}");
        assert_eq!(lines[idle + 4], ["cpu2.POLL", "14.00", "-"], "{text}");
        let irq = find("interrupts");
        assert_eq!(lines[irq][..4], ["interrupts", "per", "CPU", "(median"]);
        assert!(text.contains("--series interrupts.ROW.COLUMN):"), "{text}");
        assert_eq!(lines[irq + 1], ["cpu", "irq_total"], "{text}");
        assert_eq!(lines[irq + 3], ["cpu1", "600.0"], "{text}");
        // The IRQ lines per CPU make a table of their own.
        assert_eq!(lines[irq + 4][..2], ["interrupts", "per"], "{text}");
        assert_eq!(lines[irq + 5], ["cpu", "LOC", "36:virtio1-req.0"], "{text}");
        assert_eq!(lines[irq + 6], ["cpu1.irq", "80.00", "16.00"], "{text}");

        assert_eq!(per_cpu_key("cpufreq.cpu0_khz"), None);
        assert_eq!(per_cpu_key("stat.ctxt"), None);
        assert_eq!(
            per_cpu_key("cpuidle.cpu3.C1E.time_us"),
            Some(("cpuidle", 3, Some("C1E"), "time_us"))
        );
        assert_eq!(
            per_cpu_key("interrupts.cpu1.irq.36:virtio1-req.0"),
            Some(("interrupts", 1, Some("irq"), "36:virtio1-req.0"))
        );
    }

    #[test]
    fn values_read_in_the_unit_of_their_key() {
        use SeriesKind::{Counter, Gauge};
        let ns = Scale::of("ns", Counter, &[1.53e9, 0.0]);
        assert_eq!((ns.unit.as_str(), ns.format(1.53e9)), ("s", "1.530".into()));
        assert_eq!(ns.heading("stat.system_ns"), "stat.system (s)");
        let ms = Scale::of("ns", Counter, &[1e7]);
        assert_eq!((ms.unit.as_str(), ms.format(1e7)), ("ms", "10.00".into()));
        let bytes = Scale::of("bytes", Gauge, &[1.945e10]);
        assert_eq!(bytes.format(1.945e10), "18.11");
        assert_eq!(
            bytes.heading("meminfo.Cached_bytes"),
            "meminfo.Cached (GiB)"
        );
        assert_eq!(Scale::of("bytes", Gauge, &[3e6]).unit, "MiB");
        let count = Scale::of("count", Counter, &[1.0, 39106.5]);
        assert_eq!(
            (count.format(1.0), count.format(39106.4)),
            ("1".into(), "39106".into())
        );
        assert_eq!(count.heading("stat.ctxt"), "stat.ctxt");
        // A gauge's mean of a count keeps its fraction.
        assert_eq!(Scale::of("count", Gauge, &[6.742]).format(6.742), "6.742");
        assert_eq!(
            Scale::of("kHz", Gauge, &[2.1e6]).heading("cpufreq.cpu0_khz"),
            "cpufreq.cpu0_khz (kHz)"
        );
        // Zero in every run reads 0 in the smallest unit.
        assert_eq!(Scale::of("ns", Counter, &[0.0]).format(0.0), "0");
    }

    #[test]
    fn one_series_of_every_run() {
        let text = series_text(&config(), "stat.ctxt").unwrap();
        assert_eq!(text.lines().count(), 1 + 6);
        assert!(text.contains("2.0"), "{text}");
        assert!(series_text(&config(), "stat.nope").is_none());
    }
}
