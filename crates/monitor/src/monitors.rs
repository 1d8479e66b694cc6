//! The built-in monitors: each reads its interface through the parsers of [`crate::procfs`]
//! (/proc/meminfo through [`vernier_sys::meminfo`]) into a buffer it keeps between samples.

use std::path::PathBuf;

use vernier_sys::meminfo::visit_meminfo;

use crate::perf::{PerfCounter, COUNTERS};
use crate::procfs::{
    cpufreq_files, parse_cpuidle_value, parse_interrupts, parse_pressure, parse_proc_stat,
    parse_scaling_cur_freq, parse_schedstat, parse_slabinfo, read_cpuidle_states,
    visit_interrupt_lines, visit_slabinfo, visit_vmstat,
};
use crate::{read_into, top_movers, Metric, MetricNames, Monitor, MonitorError, Reading};

/// Reads `path` into `buf` and parses it, mapping parse errors to the path.
fn load<'b, T>(
    path: &std::path::Path,
    buf: &'b mut String,
    parse: impl FnOnce(&'b str) -> Result<T, String>,
) -> Result<T, MonitorError> {
    read_into(path, buf)?;
    parse(buf).map_err(|e| MonitorError::parse(path, e))
}

fn buffer() -> String {
    String::with_capacity(16 * 1024)
}

/// `stat`: /proc/stat (proc(5)). CPU times are summed over CPUs and converted from USER_HZ
/// ticks to ns; note they advance in whole ticks, unlike rusage.
pub struct StatMonitor {
    path: PathBuf,
    buf: String,
    ns_per_tick: f64,
    names: MetricNames,
}

impl StatMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        StatMonitor {
            path: proc_root.join("stat"),
            buf: buffer(),
            ns_per_tick: 1e9 / vernier_sys::clock::clock_ticks_per_second() as f64,
            names: MetricNames::default(),
        }
    }
}

impl Monitor for StatMonitor {
    fn name(&self) -> &'static str {
        "stat"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, parse_proc_stat).map(|_| ())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        let s = load(&self.path, &mut self.buf, parse_proc_stat)?;
        let c = s.cpu;
        for (metric, ticks) in [
            ("user_ns", c.user),
            ("nice_ns", c.nice),
            ("system_ns", c.system),
            ("idle_ns", c.idle),
            ("iowait_ns", c.iowait),
            ("irq_ns", c.irq),
            ("softirq_ns", c.softirq),
            ("steal_ns", c.steal),
        ] {
            out.push(Reading::counter(
                self.names.get(metric),
                "ns",
                ticks as f64 * self.ns_per_tick,
            ));
        }
        let n = &mut self.names;
        out.push(Reading::counter(n.get("ctxt"), "count", s.ctxt as f64));
        out.push(Reading::counter(n.get("intr"), "count", s.intr as f64));
        out.push(Reading::counter(
            n.get("processes"),
            "count",
            s.processes as f64,
        ));
        out.push(Reading::gauge(
            n.get("procs_running"),
            "count",
            s.procs_running as f64,
        ));
        out.push(Reading::gauge(
            n.get("procs_blocked"),
            "count",
            s.procs_blocked as f64,
        ));
        Ok(())
    }
}

/// The /proc/meminfo fields of the `meminfo` monitor (proc(5)).
pub const MEMINFO_FIELDS: [&str; 10] = [
    "Cached",
    "Buffers",
    "Dirty",
    "AnonPages",
    "Slab",
    "SReclaimable",
    "MemAvailable",
    "MemFree",
    "Writeback",
    "Shmem",
];

/// `meminfo`: gauges in bytes, named `<Field>_bytes`.
pub struct MeminfoMonitor {
    path: PathBuf,
    buf: String,
    missing: Vec<(String, String)>,
    /// `<Field>_bytes` of each of [`MEMINFO_FIELDS`].
    names: Vec<Metric>,
}

impl MeminfoMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        MeminfoMonitor {
            path: proc_root.join("meminfo"),
            buf: buffer(),
            missing: Vec::new(),
            names: MEMINFO_FIELDS
                .iter()
                .map(|f| Metric::from(format!("{f}_bytes")))
                .collect(),
        }
    }
}

impl Monitor for MeminfoMonitor {
    fn name(&self) -> &'static str {
        "meminfo"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let mut seen = [false; MEMINFO_FIELDS.len()];
        load(&self.path, &mut self.buf, |t| {
            visit_meminfo(t, |k, _| {
                if let Some(i) = MEMINFO_FIELDS.iter().position(|f| *f == k) {
                    seen[i] = true;
                }
            })
        })?;
        self.missing = MEMINFO_FIELDS
            .iter()
            .zip(seen)
            .filter(|(_, s)| !s)
            .map(|(f, _)| (format!("{f}_bytes"), format!("no {f} in /proc/meminfo")))
            .collect();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| {
            visit_meminfo(t, |k, v| {
                if let Some(i) = MEMINFO_FIELDS.iter().position(|f| *f == k) {
                    out.push(Reading::gauge(self.names[i].clone(), "bytes", v as f64));
                }
            })
        })
    }

    fn unsupported(&self) -> Vec<(String, String)> {
        self.missing.clone()
    }
}

/// Whether the `vmstat` monitor records a /proc/vmstat counter: faults, swap traffic, reclaim
/// scanning and stealing (the kswapd/direct split shows who reclaimed), compaction.
pub fn vmstat_selected(name: &str) -> bool {
    matches!(name, "pgfault" | "pgmajfault" | "pswpin" | "pswpout")
        || name.starts_with("pgscan_")
        || name.starts_with("pgsteal_")
        || name.starts_with("compact_")
}

/// `vmstat`: the counters of [`vmstat_selected`].
pub struct VmstatMonitor {
    path: PathBuf,
    buf: String,
    names: MetricNames,
}

impl VmstatMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        VmstatMonitor {
            path: proc_root.join("vmstat"),
            buf: buffer(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for VmstatMonitor {
    fn name(&self) -> &'static str {
        "vmstat"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| visit_vmstat(t, |_, _| ()))
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| {
            visit_vmstat(t, |k, v| {
                if vmstat_selected(k) {
                    out.push(Reading::counter(self.names.get(k), "count", v as f64));
                }
            })
        })
    }
}

/// `schedstat`: /proc/schedstat summed over CPUs; unsupported without CONFIG_SCHEDSTATS.
pub struct SchedstatMonitor {
    path: PathBuf,
    buf: String,
    names: MetricNames,
}

impl SchedstatMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        SchedstatMonitor {
            path: proc_root.join("schedstat"),
            buf: buffer(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for SchedstatMonitor {
    fn name(&self) -> &'static str {
        "schedstat"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        // An unknown format version is unsupported rather than misread.
        load(&self.path, &mut self.buf, parse_schedstat)
            .map(|_| ())
            .map_err(|e| match e {
                MonitorError::Parse { path, detail } => MonitorError::Unsupported {
                    what: format!("{}: {detail}", path.display()),
                },
                e => e,
            })
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        let s = load(&self.path, &mut self.buf, parse_schedstat)?;
        for (metric, unit, v) in [
            ("yld_count", "count", s.yld_count),
            ("sched_count", "count", s.sched_count),
            ("sched_goidle", "count", s.sched_goidle),
            ("ttwu_count", "count", s.ttwu_count),
            ("ttwu_local", "count", s.ttwu_local),
            ("run_time_ns", "ns", s.run_time_ns),
            ("run_delay_ns", "ns", s.run_delay_ns),
            ("timeslices", "count", s.timeslices),
        ] {
            out.push(Reading::counter(self.names.get(metric), unit, v as f64));
        }
        Ok(())
    }
}

/// The PSI resources.
pub const PSI_RESOURCES: [&str; 3] = ["cpu", "memory", "io"];

/// `pressure`: PSI (Documentation/accounting/psi.rst). avg10 as a gauge in percent, total
/// stall time as a counter in us, for `some` and `full`. The system-wide cpu `full` line is
/// always zero (reported since 5.13 only for the format's sake) and is skipped.
pub struct PressureMonitor {
    paths: Vec<(&'static str, PathBuf)>,
    buf: String,
    missing: Vec<(String, String)>,
    names: MetricNames,
}

impl PressureMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        let dir = proc_root.join("pressure");
        PressureMonitor {
            paths: PSI_RESOURCES.iter().map(|r| (*r, dir.join(r))).collect(),
            buf: buffer(),
            missing: Vec::new(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for PressureMonitor {
    fn name(&self) -> &'static str {
        "pressure"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let mut present = Vec::new();
        let mut reasons = Vec::new();
        for (resource, path) in std::mem::take(&mut self.paths) {
            match load(&path, &mut self.buf, parse_pressure) {
                Ok(_) => present.push((resource, path)),
                Err(e) if e.is_unsupported() => {
                    self.missing.push((resource.to_string(), e.reason()));
                    reasons.push(e.reason());
                }
                Err(e) => return Err(e),
            }
        }
        self.paths = present;
        if self.paths.is_empty() {
            return Err(MonitorError::Unsupported {
                what: format!("no PSI (CONFIG_PSI, psi=1): {}", reasons.join("; ")),
            });
        }
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for (resource, path) in &self.paths {
            let p = load(path, &mut self.buf, parse_pressure)?;
            let full = if *resource == "cpu" { None } else { p.full };
            for (line, psi) in [("some", Some(p.some)), ("full", full)] {
                let Some(psi) = psi else { continue };
                out.push(Reading::gauge(
                    self.names
                        .format(format_args!("{resource}.{line}_avg10_pct")),
                    "pct",
                    psi.avg10,
                ));
                out.push(Reading::counter(
                    self.names
                        .format(format_args!("{resource}.{line}_total_us")),
                    "us",
                    psi.total_us as f64,
                ));
            }
        }
        Ok(())
    }

    fn unsupported(&self) -> Vec<(String, String)> {
        self.missing.clone()
    }
}

/// `interrupts`: every IRQ line of /proc/interrupts (`irq.<label>`) and softirq of
/// /proc/softirqs (`softirq.<name>`) summed over CPUs, and their totals (`irq_total`,
/// `softirq_total`); and per CPU the sum of its column of each file (`cpu<N>.irq_total`,
/// `cpu<N>.softirq_total`), which tells which CPU the interrupts landed on. With `per-cpu=on`
/// also every IRQ line per CPU (`cpu<N>.irq.<label>`): one series per line and CPU while the
/// run lasts, hence not by default. At the end of a run the `top` series of each group (`irq`,
/// `softirq`, `cpu<N>`) with the largest change are kept with every total.
pub struct InterruptsMonitor {
    interrupts: PathBuf,
    softirqs: Option<PathBuf>,
    buf: String,
    top: usize,
    missing: Vec<(String, String)>,
    names: MetricNames,
    /// Per-CPU sums of the file being read, indexed by CPU number; `None` for CPUs without a
    /// column (offline, or beyond the highest one).
    cpu_totals: Vec<Option<u64>>,
    per_cpu: bool,
}

impl InterruptsMonitor {
    pub fn new(proc_root: PathBuf, top: usize) -> Self {
        InterruptsMonitor {
            interrupts: proc_root.join("interrupts"),
            softirqs: Some(proc_root.join("softirqs")),
            buf: buffer(),
            top,
            missing: Vec::new(),
            names: MetricNames::default(),
            cpu_totals: Vec::new(),
            per_cpu: false,
        }
    }

    /// Also records every IRQ line of /proc/interrupts per CPU.
    pub fn per_cpu(mut self, on: bool) -> Self {
        self.per_cpu = on;
        self
    }
}

/// Adds `(cpu, count)` to the per-CPU sums, growing them for a CPU not seen before (the first
/// sample, or a CPU brought online during the run).
fn add_cpu_count(totals: &mut Vec<Option<u64>>, cpu: u32, count: u64) {
    let i = cpu as usize;
    if i >= totals.len() {
        totals.resize(i + 1, None);
    }
    totals[i] = Some(totals[i].unwrap_or(0).saturating_add(count));
}

impl Monitor for InterruptsMonitor {
    fn name(&self) -> &'static str {
        "interrupts"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.interrupts, &mut self.buf, parse_interrupts)?;
        if let Some(path) = &self.softirqs {
            match load(path, &mut self.buf, parse_interrupts) {
                Ok(_) => {}
                Err(e) if e.is_unsupported() => {
                    self.missing.push(("softirq".into(), e.reason()));
                    self.softirqs = None;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        let files = [
            ("irq", Some(&self.interrupts)),
            ("softirq", self.softirqs.as_ref()),
        ];
        for (group, path) in files {
            let Some(path) = path else { continue };
            let names = &mut self.names;
            let cpu_totals = &mut self.cpu_totals;
            let lines_per_cpu = self.per_cpu && group == "irq";
            cpu_totals.iter_mut().for_each(|t| *t = None);
            let mut total = 0u64;
            load(path, &mut self.buf, |text| {
                visit_interrupt_lines(text, |line| {
                    total = total.saturating_add(line.total);
                    let metric = match line.device {
                        Some(device) => {
                            names.format(format_args!("{group}.{}:{device}", line.label))
                        }
                        None => names.format(format_args!("{group}.{}", line.label)),
                    };
                    out.push(Reading::counter(metric, "count", line.total as f64));
                    for (cpu, count) in line.per_cpu() {
                        add_cpu_count(cpu_totals, cpu, count);
                        if lines_per_cpu {
                            let metric = match line.device {
                                Some(device) => names
                                    .format(format_args!("cpu{cpu}.irq.{}:{device}", line.label)),
                                None => names.format(format_args!("cpu{cpu}.irq.{}", line.label)),
                            };
                            out.push(Reading::counter(metric, "count", count as f64));
                        }
                    }
                })
            })?;
            out.push(Reading::counter(
                names.format(format_args!("{group}_total")),
                "count",
                total as f64,
            ));
            for (cpu, t) in cpu_totals.iter().enumerate() {
                if let Some(t) = t {
                    out.push(Reading::counter(
                        names.format(format_args!("cpu{cpu}.{group}_total")),
                        "count",
                        *t as f64,
                    ));
                }
            }
        }
        Ok(())
    }

    fn unsupported(&self) -> Vec<(String, String)> {
        self.missing.clone()
    }

    fn keep(&self, changes: &[(&str, f64)]) -> Vec<bool> {
        top_movers(changes, self.top, |m| m.ends_with("_total"))
    }
}

/// `softirqs`: /proc/softirqs per CPU and softirq (`cpu<N>.<softirq>`: `cpu1.TIMER`,
/// `cpu1.NET_RX`, ...; the names are those of kernel/softirq.c `softirq_to_name`). The
/// `interrupts` monitor has the same counts summed over CPUs.
pub struct SoftirqsMonitor {
    path: PathBuf,
    buf: String,
    names: MetricNames,
}

impl SoftirqsMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        SoftirqsMonitor {
            path: proc_root.join("softirqs"),
            buf: buffer(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for SoftirqsMonitor {
    fn name(&self) -> &'static str {
        "softirqs"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| {
            visit_interrupt_lines(t, |_| ())
        })
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        let names = &mut self.names;
        load(&self.path, &mut self.buf, |text| {
            visit_interrupt_lines(text, |line| {
                for (cpu, count) in line.per_cpu() {
                    out.push(Reading::counter(
                        names.format(format_args!("cpu{cpu}.{}", line.label)),
                        "count",
                        count as f64,
                    ));
                }
            })
        })
    }
}

/// The files and series of one idle state of one CPU.
struct IdleStateSeries {
    usage: PathBuf,
    time: PathBuf,
    usage_metric: Metric,
    time_metric: Metric,
    latency_metric: Metric,
    disabled_metric: Metric,
    latency_us: f64,
    disabled: f64,
}

/// The metric name of an idle state: its name with characters other than letters, digits,
/// `-` and `_` made `_` (`haltpoll idle` -> `haltpoll_idle`), `state<K>` when empty.
pub fn idle_state_key(name: &str, index: u32) -> String {
    let key: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if key.is_empty() {
        format!("state{index}")
    } else {
        key
    }
}

/// `cpuidle`: per CPU and idle state (Documentation/admin-guide/pm/cpuidle.rst), the entries
/// into the state (`cpu<N>.<state>.usage`) and the time spent in it (`cpu<N>.<state>.time_us`)
/// as counters, and as constant facts read at the start of the run the state's exit latency
/// (`cpu<N>.<state>.latency_us`) and whether it is disabled (`cpu<N>.<state>.disabled`, 0 or
/// 1). A deep state entered often on the CPU of a latency spike, with an exit latency near the
/// spike, explains it. States are named as the driver names them (`POLL`, `C1E`); a name
/// repeated on one CPU gets `_<K>` appended. Unsupported without a cpuidle driver.
pub struct CpuidleMonitor {
    sys_root: PathBuf,
    states: Vec<IdleStateSeries>,
    buf: String,
}

impl CpuidleMonitor {
    pub fn new(sys_root: PathBuf) -> Self {
        CpuidleMonitor {
            sys_root,
            states: Vec::new(),
            buf: String::with_capacity(64),
        }
    }
}

impl Monitor for CpuidleMonitor {
    fn name(&self) -> &'static str {
        "cpuidle"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let states = read_cpuidle_states(&self.sys_root)?;
        let mut seen: std::collections::HashSet<(u32, String)> = Default::default();
        self.states = states
            .into_iter()
            .map(|s| {
                let mut key = idle_state_key(&s.name, s.index);
                if !seen.insert((s.cpu, key.clone())) {
                    key = format!("{key}_{}", s.index);
                }
                let metric = |what: &str| Metric::from(format!("cpu{}.{key}.{what}", s.cpu));
                IdleStateSeries {
                    usage: s.dir.join("usage"),
                    time: s.dir.join("time"),
                    usage_metric: metric("usage"),
                    time_metric: metric("time_us"),
                    latency_metric: metric("latency_us"),
                    disabled_metric: metric("disabled"),
                    latency_us: s.latency_us as f64,
                    disabled: if s.disabled { 1.0 } else { 0.0 },
                }
            })
            .collect();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for s in &self.states {
            let usage = load(&s.usage, &mut self.buf, |t| parse_cpuidle_value(t, "usage"))?;
            let time = load(&s.time, &mut self.buf, |t| parse_cpuidle_value(t, "time"))?;
            out.push(Reading::counter(
                s.usage_metric.clone(),
                "count",
                usage as f64,
            ));
            out.push(Reading::counter(s.time_metric.clone(), "us", time as f64));
            out.push(Reading::gauge(s.latency_metric.clone(), "us", s.latency_us));
            out.push(Reading::gauge(
                s.disabled_metric.clone(),
                "bool",
                s.disabled,
            ));
        }
        Ok(())
    }
}

/// `slab`: active objects per cache of /proc/slabinfo (`active_objs.<cache>`) and the bytes
/// they occupy in all (`active_bytes`); the `top` caches with the largest change are kept.
/// slabinfo is readable by root only (slabinfo(5)): unsupported otherwise.
pub struct SlabMonitor {
    path: PathBuf,
    buf: String,
    top: usize,
    names: MetricNames,
}

impl SlabMonitor {
    pub fn new(proc_root: PathBuf, top: usize) -> Self {
        SlabMonitor {
            path: proc_root.join("slabinfo"),
            buf: String::with_capacity(64 * 1024),
            top,
            names: MetricNames::default(),
        }
    }
}

impl Monitor for SlabMonitor {
    fn name(&self) -> &'static str {
        "slab"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, parse_slabinfo).map(|_| ())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        let names = &mut self.names;
        let mut bytes = 0u64;
        load(&self.path, &mut self.buf, |text| {
            visit_slabinfo(text, |c| {
                bytes = bytes.saturating_add(c.active_objs.saturating_mul(c.objsize));
                out.push(Reading::gauge(
                    names.format(format_args!("active_objs.{}", c.name)),
                    "count",
                    c.active_objs as f64,
                ));
            })
        })?;
        out.push(Reading::gauge(
            names.get("active_bytes"),
            "bytes",
            bytes as f64,
        ));
        Ok(())
    }

    fn keep(&self, changes: &[(&str, f64)]) -> Vec<bool> {
        top_movers(changes, self.top, |m| m == "active_bytes")
    }
}

/// `perf`: the counters of [`COUNTERS`] for the run's child and its descendants.
pub struct PerfMonitor {
    counters: Vec<(Metric, &'static str, PerfCounter)>,
    missing: Vec<(String, String)>,
}

impl PerfMonitor {
    pub fn new() -> Self {
        PerfMonitor {
            counters: Vec::with_capacity(COUNTERS.len()),
            missing: Vec::new(),
        }
    }
}

impl Default for PerfMonitor {
    fn default() -> Self {
        Self::new()
    }
}

impl Monitor for PerfMonitor {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn start(&mut self, child_pid: i32) -> Result<(), MonitorError> {
        if child_pid <= 0 {
            return Err(MonitorError::Unsupported {
                what: "no child process to count".into(),
            });
        }
        for def in &COUNTERS {
            match PerfCounter::open(def, child_pid) {
                Ok(c) => self.counters.push((Metric::from(def.metric), def.unit, c)),
                Err(e) if e.is_unsupported() => {
                    self.missing.push((def.metric.to_string(), e.reason()));
                }
                Err(e) => return Err(e),
            }
        }
        if self.counters.is_empty() {
            return Err(MonitorError::Unsupported {
                what: format!("no perf counter could be opened for pid {child_pid}"),
            });
        }
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for (metric, unit, counter) in &self.counters {
            out.push(Reading::counter(
                metric.clone(),
                unit,
                counter.read()?.scaled(),
            ));
        }
        Ok(())
    }

    fn unsupported(&self) -> Vec<(String, String)> {
        self.missing.clone()
    }
}

/// `cpufreq`: scaling_cur_freq of every CPU with a policy (`cpu<N>_khz`), where a cpufreq
/// driver exists (Documentation/admin-guide/pm/cpufreq.rst).
pub struct CpufreqMonitor {
    sys_root: PathBuf,
    files: Vec<(Metric, PathBuf)>,
    buf: String,
}

impl CpufreqMonitor {
    pub fn new(sys_root: PathBuf) -> Self {
        CpufreqMonitor {
            sys_root,
            files: Vec::new(),
            buf: String::with_capacity(64),
        }
    }
}

impl Monitor for CpufreqMonitor {
    fn name(&self) -> &'static str {
        "cpufreq"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        self.files = cpufreq_files(&self.sys_root)?
            .into_iter()
            .map(|(cpu, path)| (Metric::from(format!("cpu{cpu}_khz")), path))
            .collect();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for (metric, path) in &self.files {
            let khz = load(path, &mut self.buf, parse_scaling_cur_freq)?;
            out.push(Reading::gauge(metric.clone(), "kHz", khz as f64));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::SeriesKind;
    use std::path::Path;

    fn sample_once(m: &mut dyn Monitor) -> Vec<Reading> {
        m.start(0).unwrap();
        let mut out = Vec::new();
        m.sample(&mut out).unwrap();
        out
    }

    fn get<'a>(r: &'a [Reading], metric: &str) -> &'a Reading {
        r.iter()
            .find(|x| &*x.metric == metric)
            .unwrap_or_else(|| panic!("no {metric} in {r:?}"))
    }

    #[test]
    fn stat_on_real_proc() {
        let r = sample_once(&mut StatMonitor::new("/proc".into()));
        assert_eq!(r.len(), 13);
        assert_eq!(get(&r, "ctxt").kind, SeriesKind::Counter);
        assert!(get(&r, "user_ns").value > 0.0);
        assert_eq!(get(&r, "procs_running").kind, SeriesKind::Gauge);
    }

    #[test]
    fn meminfo_records_fields_and_missing_ones() {
        let r = sample_once(&mut MeminfoMonitor::new("/proc".into()));
        assert_eq!(r.len(), MEMINFO_FIELDS.len());
        assert!(get(&r, "MemAvailable_bytes").value > 0.0);

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("meminfo"), "MemFree: 10 kB\nCached: 2 kB\n").unwrap();
        let mut m = MeminfoMonitor::new(dir.path().into());
        let r = sample_once(&mut m);
        assert_eq!(get(&r, "MemFree_bytes").value, 10240.0);
        let missing = m.unsupported();
        assert_eq!(missing.len(), MEMINFO_FIELDS.len() - 2);
        assert!(missing.iter().any(|(k, _)| k == "Shmem_bytes"));
    }

    #[test]
    fn vmstat_selects_reclaim_and_compaction() {
        assert!(vmstat_selected("pgscan_kswapd") && vmstat_selected("compact_stall"));
        assert!(!vmstat_selected("nr_free_pages"));
        let r = sample_once(&mut VmstatMonitor::new("/proc".into()));
        assert!(get(&r, "pgfault").value > 0.0);
        assert!(r.iter().all(|x| vmstat_selected(&x.metric)));
    }

    #[test]
    fn pressure_skips_cpu_full_and_records_missing_resources() {
        let r = sample_once(&mut PressureMonitor::new("/proc".into()));
        assert_eq!(r.len(), 10);
        assert_eq!(get(&r, "io.full_total_us").kind, SeriesKind::Counter);
        assert!(r.iter().all(|x| &*x.metric != "cpu.full_avg10_pct"));

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pressure")).unwrap();
        std::fs::write(
            dir.path().join("pressure/memory"),
            "some avg10=1.50 avg60=0 avg300=0 total=7\nfull avg10=0 avg60=0 avg300=0 total=3\n",
        )
        .unwrap();
        let mut m = PressureMonitor::new(dir.path().into());
        let r = sample_once(&mut m);
        assert_eq!(get(&r, "memory.some_avg10_pct").value, 1.5);
        assert_eq!(m.unsupported().len(), 2);

        let empty = tempfile::tempdir().unwrap();
        let e = PressureMonitor::new(empty.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
    }

    #[test]
    fn interrupts_totals_and_top_movers() {
        let mut m = InterruptsMonitor::new("/proc".into(), 2);
        let r = sample_once(&mut m);
        let irq_sum: f64 = r
            .iter()
            .filter(|x| x.metric.starts_with("irq."))
            .map(|x| x.value)
            .sum();
        assert_eq!(get(&r, "irq_total").value, irq_sum);
        assert!(get(&r, "softirq.TIMER").value > 0.0);
        let changes = [
            ("irq.LOC", 10.0),
            ("irq.RES", 3.0),
            ("irq.NMI", 0.0),
            ("irq_total", 13.0),
        ];
        assert_eq!(m.keep(&changes), vec![true, true, false, true]);
    }

    fn fixture(name: &str) -> vernier_sys::Roots {
        vernier_sys::Roots::under(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(name),
        )
    }

    #[test]
    fn interrupts_per_cpu_totals_on_a_fixture() {
        let roots = fixture("four-cpu");
        let mut m = InterruptsMonitor::new(roots.proc_root.clone(), 5);
        let r = sample_once(&mut m);
        assert_eq!(get(&r, "irq.125:eth0-TxRx-0").value, 91_200.0);
        assert_eq!(get(&r, "irq.ERR").value, 3.0);
        assert_eq!(get(&r, "cpu3.irq_total").value, 1_396_856.0);
        // The per-CPU totals leave out the system-wide ERR and MIS counts.
        let per_cpu: f64 = (0..4)
            .map(|c| get(&r, &format!("cpu{c}.irq_total")).value)
            .sum();
        assert_eq!(per_cpu, get(&r, "irq_total").value - 10.0);
        assert_eq!(get(&r, "cpu1.softirq_total").value, 390_626.0);
        assert!(r.iter().all(|x| !x.metric.starts_with("cpu4")));
        assert!(r.iter().all(|x| !x.metric.contains(".irq.")));
        // Per-CPU totals are totals: always kept.
        let changes = [("cpu0.irq_total", 0.0), ("cpu0.softirq_total", 0.0)];
        assert_eq!(m.keep(&changes), vec![true, true]);

        // per-cpu=on: every line per CPU, the top movers kept per CPU.
        let mut m = InterruptsMonitor::new(roots.proc_root, 2).per_cpu(true);
        let r = sample_once(&mut m);
        assert_eq!(get(&r, "cpu2.irq.125:eth0-TxRx-0").value, 90_000.0);
        assert_eq!(get(&r, "cpu3.irq.LOC").value, 1_300_000.0);
        // ERR and MIS have no per-CPU counts.
        assert!(r.iter().all(|x| &*x.metric != "cpu0.irq.ERR"));
        let changes = [
            ("cpu2.irq.LOC", 9.0),
            ("cpu2.irq.125:eth0-TxRx-0", 90.0),
            ("cpu2.irq.RES", 1.0),
            ("cpu2.irq_total", 100.0),
            ("cpu3.irq.LOC", 1.0),
        ];
        assert_eq!(m.keep(&changes), vec![true, true, false, true, true]);
    }

    #[test]
    fn softirqs_per_cpu_on_fixtures_and_real_proc() {
        let mut m = SoftirqsMonitor::new(fixture("four-cpu").proc_root);
        let r = sample_once(&mut m);
        assert_eq!(r.len(), 40);
        assert_eq!(get(&r, "cpu2.NET_RX").value, 90_000.0);
        assert_eq!(get(&r, "cpu3.TIMER").kind, SeriesKind::Counter);
        let r = sample_once(&mut SoftirqsMonitor::new(fixture("kvm-2cpu").proc_root));
        assert_eq!(get(&r, "cpu1.TIMER").value, 411_253.0);
        let r = sample_once(&mut SoftirqsMonitor::new("/proc".into()));
        assert!(get(&r, "cpu0.TIMER").value > 0.0);
        let empty = tempfile::tempdir().unwrap();
        let e = SoftirqsMonitor::new(empty.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
    }

    #[test]
    fn cpuidle_on_fixtures() {
        let mut m = CpuidleMonitor::new(fixture("kvm-2cpu").sys_root);
        let r = sample_once(&mut m);
        assert_eq!(r.len(), 2 * 2 * 4);
        assert_eq!(get(&r, "cpu0.POLL.latency_us").value, 0.0);
        assert_eq!(get(&r, "cpu1.haltpoll_idle.latency_us").value, 1.0);
        assert_eq!(
            get(&r, "cpu1.haltpoll_idle.latency_us").kind,
            SeriesKind::Gauge
        );
        let time = get(&r, "cpu0.haltpoll_idle.time_us");
        assert_eq!((time.kind, time.unit), (SeriesKind::Counter, "us"));
        assert!(time.value > 0.0);

        let mut m = CpuidleMonitor::new(fixture("four-cpu").sys_root);
        let r = sample_once(&mut m);
        // cpu3 has no cpuidle directory.
        assert_eq!(r.len(), 3 * 4 * 4);
        assert_eq!(get(&r, "cpu2.C1E.disabled").value, 1.0);
        assert_eq!(get(&r, "cpu1.C1E.disabled").value, 0.0);
        assert_eq!(get(&r, "cpu2.C6.latency_us").value, 133.0);
        assert_eq!(get(&r, "cpu2.C6.usage").value, 2301.0);
        assert_eq!(get(&r, "cpu1.C1.time_us").value, 1_250_000.0);
        assert!(r.iter().all(|x| !x.metric.starts_with("cpu3")));
    }

    #[test]
    fn cpuidle_names_states_and_is_unsupported_without_a_driver() {
        assert_eq!(idle_state_key("haltpoll idle", 1), "haltpoll_idle");
        assert_eq!(idle_state_key("C1E", 2), "C1E");
        assert_eq!(idle_state_key(" ", 3), "state3");

        let dir = tempfile::tempdir().unwrap();
        for k in 0..2 {
            let d = dir
                .path()
                .join(format!("devices/system/cpu/cpu0/cpuidle/state{k}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("name"), "C1\n").unwrap();
            std::fs::write(d.join("latency"), "1\n").unwrap();
            std::fs::write(d.join("usage"), "5\n").unwrap();
            std::fs::write(d.join("time"), "7\n").unwrap();
        }
        let r = sample_once(&mut CpuidleMonitor::new(dir.path().into()));
        // No `disable` file: enabled; a repeated name gets its index.
        assert_eq!(get(&r, "cpu0.C1.disabled").value, 0.0);
        assert_eq!(get(&r, "cpu0.C1_1.usage").value, 5.0);

        let empty = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(empty.path().join("devices/system/cpu/cpu0")).unwrap();
        let e = CpuidleMonitor::new(empty.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported() && e.reason().contains("cpuidle"), "{e}");
        let e = CpuidleMonitor::new(Path::new("/nonexistent").into()).start(0);
        assert!(e.unwrap_err().is_unsupported());

        // The running machine: states, or unsupported with a reason; never a crash.
        let mut real = CpuidleMonitor::new("/sys".into());
        match real.start(0) {
            Ok(()) => {
                let mut out = Vec::new();
                real.sample(&mut out).unwrap();
                assert!(out.iter().any(|x| x.metric.starts_with("cpu0.")), "{out:?}");
            }
            Err(e) => assert!(e.is_unsupported(), "{e}"),
        }
    }

    #[test]
    fn slab_is_unsupported_without_the_file_and_reads_as_root() {
        let empty = tempfile::tempdir().unwrap();
        let e = SlabMonitor::new(empty.path().into(), 5)
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported());
        let mut m = SlabMonitor::new("/proc".into(), 5);
        match m.start(0) {
            Ok(()) => {
                let mut out = Vec::new();
                m.sample(&mut out).unwrap();
                assert!(get(&out, "active_bytes").value > 0.0);
                assert!(out.len() > 10);
            }
            // Not root: slabinfo is mode 0400.
            Err(e) => assert!(e.is_unsupported(), "{e}"),
        }
    }

    #[test]
    fn schedstat_and_cpufreq_from_fixture_trees() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("schedstat"),
            "version 16\ntimestamp 1\ncpu0 0 0 10 2 8 4 1000 500 12\n",
        )
        .unwrap();
        let r = sample_once(&mut SchedstatMonitor::new(dir.path().into()));
        assert_eq!(get(&r, "run_delay_ns").value, 500.0);
        std::fs::write(dir.path().join("schedstat"), "version 99\n").unwrap();
        let e = SchedstatMonitor::new(dir.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        let e = SchedstatMonitor::new(Path::new("/nonexistent").into()).start(0);
        assert!(e.unwrap_err().is_unsupported());

        let d = dir.path().join("devices/system/cpu/cpu3/cpufreq");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("scaling_cur_freq"), "1800000\n").unwrap();
        let r = sample_once(&mut CpufreqMonitor::new(dir.path().into()));
        assert_eq!(get(&r, "cpu3_khz").value, 1_800_000.0);
        assert_eq!(r[0].unit, "kHz");
    }

    #[test]
    fn perf_without_child_is_unsupported() {
        let e = PerfMonitor::new().start(0).unwrap_err();
        assert!(e.is_unsupported());
    }
}
