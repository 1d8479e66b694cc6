//! Monitor data of a configuration: the per-run summaries across its measured runs, and one
//! series of every run.

use std::collections::BTreeMap;

use vernier_model::monitor::SeriesKind;
use vernier_model::StoredConfiguration;
use vernier_stats::{median, quantile};

use crate::format::sig;
use crate::table::columns;
use crate::units;

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

/// Summary of one monitor key (`monitor.metric`) over the measured runs of a configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MonitorSummary {
    pub key: String,
    /// The series' unit (`ns`, `bytes`, `count`, ...) and kind, as the monitor recorded them.
    pub unit: String,
    pub kind: SeriesKind,
    /// Runs that recorded the key.
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Per-key summaries over the measured runs, sorted by key.
pub fn monitor_summaries(config: &StoredConfiguration) -> Vec<MonitorSummary> {
    let mut by_key: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut units: BTreeMap<String, (&str, SeriesKind)> = BTreeMap::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        if let Some(m) = &run.monitors {
            for (k, v) in &m.summary {
                by_key.entry(k).or_default().push(*v);
            }
            for s in &m.series {
                units.entry(s.key()).or_insert((s.unit.as_str(), s.kind));
            }
        }
    }
    by_key
        .into_iter()
        .filter_map(|(key, values)| {
            let (unit, kind) = units.get(key).copied().unwrap_or(("", SeriesKind::Gauge));
            Some(MonitorSummary {
                key: key.to_string(),
                unit: unit.to_string(),
                kind,
                runs: values.len(),
                median: median(&values).ok()?,
                min: quantile(&values, 0.0).ok()?,
                max: quantile(&values, 1.0).ok()?,
            })
        })
        .collect()
}

/// A monitor key as the measured runs of some configurations recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedKey {
    pub key: String,
    /// The series' unit and kind, as the monitor recorded them.
    pub unit: String,
    pub kind: SeriesKind,
    /// Measured runs that recorded the key.
    pub runs: usize,
    /// The one value of every point of every run, when they all have the same (a counter that
    /// never rose, stored as its increase 0; a gauge that never moved): its figure would be
    /// flat lines that say no more than this number.
    pub constant: Option<f64>,
}

/// Every series key that a measured run of `configurations` recorded, sorted by key.
pub fn recorded_keys<'a>(
    configurations: impl IntoIterator<Item = &'a StoredConfiguration>,
) -> Vec<RecordedKey> {
    // Per key: its record, the first value seen and whether every later point equalled it.
    let mut by_key: BTreeMap<String, (RecordedKey, Option<f64>, bool)> = BTreeMap::new();
    for run in configurations
        .into_iter()
        .flat_map(|c| &c.runs)
        .filter(|r| !r.warmup)
    {
        let Some(m) = &run.monitors else { continue };
        for s in &m.series {
            let (record, first, same) = by_key.entry(s.key()).or_insert_with(|| {
                let record = RecordedKey {
                    key: s.key(),
                    unit: s.unit.clone(),
                    kind: s.kind,
                    runs: 0,
                    constant: None,
                };
                (record, None, true)
            });
            record.runs += 1;
            for p in &s.points {
                match first {
                    None => *first = Some(p.value),
                    Some(v) => *same &= *v == p.value,
                }
            }
        }
    }
    by_key
        .into_values()
        .map(|(mut record, first, same)| {
            record.constant = first.filter(|_| same);
            record
        })
        .collect()
}

impl RecordedKey {
    /// The scale that shows the constant value.
    pub fn scale(&self) -> Scale {
        Scale::of(&self.unit, self.kind, &[self.constant.unwrap_or(0.0)])
    }
}

impl MonitorSummary {
    /// The scale that shows this key's median, minimum and maximum.
    pub fn scale(&self) -> Scale {
        Scale::of(&self.unit, self.kind, &[self.median, self.min, self.max])
    }
}

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
        let ladder = match unit {
            "ns" => units::NS,
            "us" => units::US,
            "bytes" => units::BYTES,
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
        let (unit, divisor) = units::unit_or_smallest(ladder, largest, 1.0);
        Scale {
            unit: unit.to_string(),
            divisor,
            whole: false,
        }
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
                let scale = s.scale();
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
    use std::collections::BTreeMap;
    use uuid::Uuid;
    use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
    use vernier_model::{ConfigurationRecord, MetricInfo, Options, RunRecord, Rusage};

    fn run(index: u32, ctxt: f64) -> RunRecord {
        let mut data = RunMonitorData {
            series: vec![MonitorSeries {
                monitor: "stat".into(),
                metric: "ctxt".into(),
                unit: "count".into(),
                kind: SeriesKind::Counter,
                points: vec![
                    MonitorPoint {
                        t_ns: 0,
                        value: 0.0,
                    },
                    MonitorPoint {
                        t_ns: 2_000_000,
                        value: ctxt,
                    },
                ],
            }],
            ..Default::default()
        };
        data.summary.insert("stat.ctxt".into(), ctxt);
        data.unsupported
            .insert("schedstat".into(), "/proc/schedstat is absent".into());
        RunRecord {
            id: Uuid::nil(),
            index,
            warmup: false,
            round: 0,
            preceding_executions: index,
            started_at_ns: 0,
            ended_at_ns: 1,
            values: BTreeMap::new(),
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            histograms: Vec::new(),
            monitors: Some(data),
            setup_steps: vec![],
            setup_changed: Vec::new(),
        }
    }

    fn config() -> StoredConfiguration {
        StoredConfiguration {
            record: ConfigurationRecord {
                id: Uuid::nil(),
                position: 0,
                benchmark: "pipe".into(),
                benchmark_version: "1".into(),
                options: Options::default(),
                metric: MetricInfo {
                    name: "round_trip".into(),
                    unit: "us".into(),
                    higher_is_better: false,
                },
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: None,
                converged: false,
                error: None,
            },
            runs: vec![run(0, 10.0), run(1, 30.0), run(2, 20.0)],
        }
    }

    #[test]
    fn summaries_over_runs() {
        let s = monitor_summaries(&config());
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].runs, s[0].median, s[0].min, s[0].max),
            (3, 20.0, 10.0, 30.0)
        );
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

    /// A run whose monitors recorded `series` (monitor, metric, kind, change) in that order.
    fn run_with(index: u32, series: &[(&str, &str, SeriesKind, f64)]) -> RunRecord {
        let mut r = run(index, 1.0);
        let data = r.monitors.as_mut().unwrap();
        data.unsupported.clear();
        for &(monitor, metric, kind, value) in series {
            let s = MonitorSeries {
                monitor: monitor.into(),
                metric: metric.into(),
                unit: "count".into(),
                kind,
                points: vec![
                    MonitorPoint {
                        t_ns: 0,
                        value: if kind == SeriesKind::Counter {
                            0.0
                        } else {
                            value
                        },
                    },
                    MonitorPoint {
                        t_ns: 1_000_000,
                        value,
                    },
                ],
            };
            data.summary.insert(s.key(), value);
            data.series.push(s);
        }
        r
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
        let mut c = config();
        c.runs = vec![run_with(0, &series(1.0)), run_with(1, &series(3.0))];
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
    fn keys_constant_over_every_run_carry_their_value() {
        use SeriesKind::{Counter, Gauge};
        let mut c = config();
        c.runs = vec![
            run_with(
                0,
                &[
                    ("vmstat", "pswpin", Counter, 0.0),
                    ("meminfo", "MemTotal", Gauge, 5.0),
                    ("stat", "procs_running", Gauge, 2.0),
                ],
            ),
            run_with(
                1,
                &[
                    ("vmstat", "pswpin", Counter, 0.0),
                    ("meminfo", "MemTotal", Gauge, 5.0),
                    ("stat", "procs_running", Gauge, 3.0),
                ],
            ),
        ];
        // A warmup run's different value does not count: only measured runs are drawn.
        let mut warmup = run_with(2, &[("meminfo", "MemTotal", Gauge, 7.0)]);
        warmup.warmup = true;
        c.runs.push(warmup);
        let keys = recorded_keys([&c]);
        let constant: Vec<(&str, usize, Option<f64>)> = keys
            .iter()
            .map(|k| (k.key.as_str(), k.runs, k.constant))
            .collect();
        assert_eq!(
            constant,
            [
                ("meminfo.MemTotal", 2, Some(5.0)),
                // Rose from 0 to 1 within each run.
                ("stat.ctxt", 2, None),
                // 2 in one run, 3 in the other: each run flat, the runs not alike.
                ("stat.procs_running", 2, None),
                ("vmstat.pswpin", 2, Some(0.0)),
            ]
        );
    }

    #[test]
    fn one_series_of_every_run() {
        let text = series_text(&config(), "stat.ctxt").unwrap();
        assert_eq!(text.lines().count(), 1 + 6);
        assert!(text.contains("2.0"), "{text}");
        assert!(series_text(&config(), "stat.nope").is_none());
    }
}
