//! Parsers and readers of the /proc and /sys files the monitors sample.
//!
//! Parsers are pure functions of the file's text; readers take the root directory. Field
//! meanings are from proc(5) unless another source is cited.
//!
//! Words are split at ASCII whitespace: the kernel writes these files with `seq_printf` in
//! ASCII, and splitting at Unicode whitespace took about 3% of the CPU samples of a 1,000-run
//! session of `true` (a character decoded and classified at every byte of every sample).

use std::path::Path;

use vernier_sys::procstat::{parse_proc_stat_cpu, CpuTimes};

use crate::{read_text, MonitorError};

/// The parts of /proc/stat the `stat` monitor records (proc(5)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// Aggregate CPU times over all CPUs, in USER_HZ ticks.
    pub cpu: CpuTimes,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Interrupts serviced since boot (first number of the `intr` line).
    pub intr: u64,
    /// Forks since boot.
    pub processes: u64,
    /// Runnable threads now (gauge).
    pub procs_running: u64,
    /// Threads blocked on I/O now (gauge).
    pub procs_blocked: u64,
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| format!("bad number '{text}' for {what}"))
}

/// Parses /proc/stat.
pub fn parse_proc_stat(text: &str) -> Result<ProcStat, String> {
    let mut stat = ProcStat {
        cpu: parse_proc_stat_cpu(text)?,
        ..Default::default()
    };
    let mut seen = 0;
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let (Some(key), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let slot = match key {
            "ctxt" => &mut stat.ctxt,
            "intr" => &mut stat.intr,
            "processes" => &mut stat.processes,
            "procs_running" => &mut stat.procs_running,
            "procs_blocked" => &mut stat.procs_blocked,
            _ => continue,
        };
        *slot = number(value, key)?;
        seen += 1;
    }
    if seen < 5 {
        return Err("missing ctxt, intr, processes or procs_* lines".into());
    }
    Ok(stat)
}

pub fn read_proc_stat(proc_root: &Path) -> Result<ProcStat, MonitorError> {
    let path = proc_root.join("stat");
    parse_proc_stat(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// Calls `f(counter, value)` for every `name value` line of /proc/vmstat whose name `wanted`
/// accepts; the others' values are not parsed (the monitor keeps some 20 of 180 counters, at
/// every sample). Allocates nothing. /proc/meminfo has its own parser,
/// [`vernier_sys::meminfo::visit_meminfo`].
pub fn visit_vmstat(
    text: &str,
    wanted: impl Fn(&str) -> bool,
    mut f: impl FnMut(&str, u64),
) -> Result<(), String> {
    let mut lines = 0;
    for line in text.lines() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(|c: char| c.is_ascii_whitespace()) else {
            return Err(format!("no value for '{line}'"));
        };
        if wanted(key) {
            f(key, number(value.trim_ascii_start(), key)?);
        }
        lines += 1;
    }
    if lines == 0 {
        return Err("no 'name value' lines".into());
    }
    Ok(())
}

/// Parses /proc/vmstat: counter -> value.
pub fn parse_vmstat(text: &str) -> Result<Vec<(String, u64)>, String> {
    let mut out = Vec::new();
    visit_vmstat(text, |_| true, |k, v| out.push((k.to_string(), v)))?;
    Ok(out)
}

pub fn read_vmstat(proc_root: &Path) -> Result<Vec<(String, u64)>, MonitorError> {
    let path = proc_root.join("vmstat");
    parse_vmstat(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// One line of a PSI file: the share of time (percent) some or all non-idle tasks stalled,
/// averaged over 10, 60 and 300 s, and the total stall time in microseconds
/// (Documentation/accounting/psi.rst).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// A /proc/pressure/{cpu,memory,io} file.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pressure {
    pub some: PsiLine,
    /// Absent before Linux 5.13 for cpu.
    pub full: Option<PsiLine>,
}

/// Parses a /proc/pressure file.
pub fn parse_pressure(text: &str) -> Result<Pressure, String> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let slot = match words.next() {
            Some("some") => &mut some,
            Some("full") => &mut full,
            _ => continue,
        };
        let mut psi = PsiLine::default();
        for word in words {
            let (k, v) = word
                .split_once('=')
                .ok_or_else(|| format!("bad field '{word}'"))?;
            let avg = || v.parse::<f64>().map_err(|_| format!("bad value '{word}'"));
            match k {
                "avg10" => psi.avg10 = avg()?,
                "avg60" => psi.avg60 = avg()?,
                "avg300" => psi.avg300 = avg()?,
                "total" => psi.total_us = number(v, "total")?,
                _ => {}
            }
        }
        *slot = Some(psi);
    }
    Ok(Pressure {
        some: some.ok_or("no 'some' line")?,
        full,
    })
}

/// Reads `<proc_root>/pressure/<resource>` (cpu, memory or io).
pub fn read_pressure(proc_root: &Path, resource: &str) -> Result<Pressure, MonitorError> {
    let path = proc_root.join("pressure").join(resource);
    parse_pressure(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// Parses /proc/interrupts into (name, count summed over CPUs). Numbered IRQs are named
/// `<n>:<device>` after the last word of their description (the handler's name, which is
/// stabler across boots than the number); the others (LOC, RES, ...) keep their label.
pub fn parse_interrupts(text: &str) -> Result<Vec<(String, u64)>, String> {
    let mut out = Vec::new();
    visit_interrupts(text, |label, device, count| {
        let name = match device {
            Some(device) => format!("{label}:{device}"),
            None => label.to_string(),
        };
        out.push((name, count));
    })?;
    Ok(out)
}

/// Calls `f(label, device, count)` for every line of /proc/interrupts or /proc/softirqs, as
/// [`parse_interrupts`] names them (`device` only for numbered IRQs), the count summed over
/// CPUs. Allocates nothing, so monitors can run it at every sample.
pub fn visit_interrupts(
    text: &str,
    mut f: impl FnMut(&str, Option<&str>, u64),
) -> Result<(), String> {
    visit_interrupt_lines(text, |line| f(line.label, line.device, line.total))
}

/// One line of /proc/interrupts or /proc/softirqs, as [`visit_interrupt_lines`] gives it.
#[derive(Debug, Clone, Copy)]
pub struct InterruptLine<'a> {
    /// `LOC`, `TIMER`, or the IRQ number.
    pub label: &'a str,
    /// For numbered IRQs the last word of the description: the handler's name.
    pub device: Option<&'a str>,
    /// The counts summed.
    pub total: u64,
    /// The header line, whose `CPU<N>` words name the count columns.
    header: &'a str,
    /// The text after the label: the counts, then the description.
    counts: &'a str,
    /// Whether the line has one count per CPU column (not so the x86 `ERR:` and `MIS:` lines,
    /// which carry one system-wide count; arch/x86/kernel/irq.c).
    per_cpu: bool,
}

impl<'a> InterruptLine<'a> {
    /// `(cpu, count)` of every CPU column, none for a line with one system-wide count. The
    /// columns are the CPUs online when the file was read (`for_each_online_cpu` in
    /// kernel/irq/proc.c and kernel/softirq.c), so their numbers need not be contiguous.
    pub fn per_cpu(&self) -> impl Iterator<Item = (u32, u64)> + 'a {
        let per_cpu = self.per_cpu;
        header_cpus(self.header)
            .filter_map(Result::ok)
            .zip(
                self.counts
                    .split_ascii_whitespace()
                    .map_while(|w| w.parse::<u64>().ok()),
            )
            .filter(move |_| per_cpu)
    }
}

/// The CPU numbers of the `CPU<N>` words of a header line.
fn header_cpus(header: &str) -> impl Iterator<Item = Result<u32, &str>> {
    header
        .split_ascii_whitespace()
        .filter(|w| w.starts_with("CPU"))
        .map(|w| w[3..].parse::<u32>().map_err(|_| w))
}

/// Calls `f` for every line of /proc/interrupts or /proc/softirqs (proc(5); the layout of
/// kernel/irq/proc.c `show_interrupts` and kernel/softirq.c): a header of `CPU<N>` columns, then
/// `label: count... [description]`. Allocates nothing, so monitors can run it at every sample.
pub fn visit_interrupt_lines(
    text: &str,
    mut f: impl FnMut(InterruptLine<'_>),
) -> Result<(), String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or("no CPU header line")?;
    let mut cpus = 0;
    for cpu in header_cpus(header) {
        cpu.map_err(|w| format!("bad CPU column '{w}' in the header"))?;
        cpus += 1;
    }
    if cpus == 0 {
        return Err("no CPU header line".into());
    }
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim();
        let mut words = rest.split_ascii_whitespace().peekable();
        let mut sum = 0u64;
        let mut n = 0;
        // Lines such as ERR and MIS carry one number, not one per CPU.
        while n < cpus {
            match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                Some(v) => {
                    sum = sum.saturating_add(v);
                    n += 1;
                    words.next();
                }
                None => break,
            }
        }
        if n == 0 {
            return Err(format!("no counts on line '{}'", line.trim()));
        }
        let device = if label.bytes().all(|b| b.is_ascii_digit()) {
            words.last()
        } else {
            None
        };
        f(InterruptLine {
            label,
            device,
            total: sum,
            header,
            counts: rest,
            per_cpu: n == cpus,
        });
    }
    Ok(())
}

/// The `(cpu, count)` pairs of one line of /proc/interrupts or /proc/softirqs.
pub type CpuCounts = Vec<(u32, u64)>;

/// Parses /proc/interrupts or /proc/softirqs into (name, [(cpu, count)]) for every line with
/// one count per CPU, named as [`parse_interrupts`] names them.
pub fn parse_interrupts_per_cpu(text: &str) -> Result<Vec<(String, CpuCounts)>, String> {
    let mut out = Vec::new();
    visit_interrupt_lines(text, |line| {
        if !line.per_cpu {
            return;
        }
        let name = match line.device {
            Some(device) => format!("{}:{device}", line.label),
            None => line.label.to_string(),
        };
        out.push((name, line.per_cpu().collect()));
    })?;
    Ok(out)
}

/// The counts of every CPU summed over the lines of /proc/interrupts or /proc/softirqs that
/// have one per CPU: (cpu, total), in column order.
pub fn interrupt_cpu_totals(text: &str) -> Result<CpuCounts, String> {
    let mut totals: CpuCounts = Vec::new();
    visit_interrupt_lines(text, |line| {
        for (i, (cpu, count)) in line.per_cpu().enumerate() {
            match totals.get_mut(i) {
                Some(t) => t.1 = t.1.saturating_add(count),
                None => totals.push((cpu, count)),
            }
        }
    })?;
    Ok(totals)
}

pub fn read_interrupts(proc_root: &Path) -> Result<Vec<(String, u64)>, MonitorError> {
    let path = proc_root.join("interrupts");
    parse_interrupts(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// Parses /proc/softirqs into (softirq, count summed over CPUs); same layout as
/// /proc/interrupts.
pub fn parse_softirqs(text: &str) -> Result<Vec<(String, u64)>, String> {
    parse_interrupts(text)
}

pub fn read_softirqs(proc_root: &Path) -> Result<Vec<(String, u64)>, MonitorError> {
    let path = proc_root.join("softirqs");
    parse_softirqs(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// One cache of /proc/slabinfo (slabinfo(5), format version 2.x).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlabCache {
    pub name: String,
    pub active_objs: u64,
    pub num_objs: u64,
    pub objsize: u64,
}

/// Parses a CONFIG_SLUB_STATS counter of /sys/kernel/slab/CACHE/ (mm/slub.c, `show_stat`):
/// the total over the CPUs, then ` C<cpu>=<count>` for each CPU with a count.
pub fn parse_slub_stat(text: &str) -> Result<u64, String> {
    let total = text.split_ascii_whitespace().next().ok_or("empty file")?;
    total
        .parse()
        .map_err(|_| format!("'{total}' is not a count"))
}

/// Parses /proc/slabinfo; only format version 2 (Linux >= 2.6.10) is understood.
pub fn parse_slabinfo(text: &str) -> Result<Vec<SlabCache>, String> {
    let mut out = Vec::new();
    visit_slabinfo(text, |c| {
        out.push(SlabCache {
            name: c.name.to_string(),
            active_objs: c.active_objs,
            num_objs: c.num_objs,
            objsize: c.objsize,
        })
    })?;
    Ok(out)
}

/// One cache of /proc/slabinfo as [`visit_slabinfo`] sees it, borrowing its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlabCacheRef<'a> {
    pub name: &'a str,
    pub active_objs: u64,
    pub num_objs: u64,
    pub objsize: u64,
}

/// Calls `f` for every cache of /proc/slabinfo; see [`parse_slabinfo`]. Allocates nothing,
/// so monitors can run it at every sample.
pub fn visit_slabinfo(text: &str, mut f: impl FnMut(SlabCacheRef<'_>)) -> Result<(), String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty file")?;
    let version = header
        .strip_prefix("slabinfo - version:")
        .map(str::trim)
        .ok_or_else(|| format!("bad header '{header}'"))?;
    if !version.starts_with("2.") {
        return Err(format!("slabinfo version {version} is not known"));
    }
    for line in lines.filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut w = line.split_ascii_whitespace();
        let (Some(name), Some(active), Some(num), Some(size)) =
            (w.next(), w.next(), w.next(), w.next())
        else {
            return Err(format!("short line '{line}'"));
        };
        f(SlabCacheRef {
            name,
            active_objs: number(active, "active_objs")?,
            num_objs: number(num, "num_objs")?,
            objsize: number(size, "objsize")?,
        });
    }
    Ok(())
}

pub fn read_slabinfo(proc_root: &Path) -> Result<Vec<SlabCache>, MonitorError> {
    let path = proc_root.join("slabinfo");
    parse_slabinfo(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// The per-CPU run-queue counters of /proc/schedstat, summed over CPUs
/// (Documentation/scheduler/sched-stats.rst). The `cpu<N>` line has the same nine fields in
/// versions 15, 16 and 17; those versions differ only in the domain lines, which are not used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedstat {
    pub version: u32,
    pub cpus: u32,
    /// 1) sched_yield() calls.
    pub yld_count: u64,
    /// 3) schedule() calls.
    pub sched_count: u64,
    /// 4) schedule() calls that left the CPU idle.
    pub sched_goidle: u64,
    /// 5) try_to_wake_up() calls.
    pub ttwu_count: u64,
    /// 6) wake-ups of a task on the waking CPU.
    pub ttwu_local: u64,
    /// 7) time tasks ran on the CPUs, ns.
    pub run_time_ns: u64,
    /// 8) time tasks waited on a run queue, ns.
    pub run_delay_ns: u64,
    /// 9) timeslices run.
    pub timeslices: u64,
}

/// Schedstat versions whose `cpu<N>` lines this parser understands.
pub const SCHEDSTAT_VERSIONS: [u32; 3] = [15, 16, 17];

/// Parses /proc/schedstat.
pub fn parse_schedstat(text: &str) -> Result<Schedstat, String> {
    let mut s = Schedstat::default();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let Some(key) = words.next() else { continue };
        if key == "version" {
            let v = words.next().ok_or("no version number")?;
            s.version = u32::try_from(number(v, "version")?).map_err(|e| e.to_string())?;
            if !SCHEDSTAT_VERSIONS.contains(&s.version) {
                return Err(format!(
                    "schedstat version {} is not known (known: 15, 16, 17)",
                    s.version
                ));
            }
            continue;
        }
        if !key.starts_with("cpu") || key.len() == 3 {
            continue;
        }
        if s.version == 0 {
            return Err("cpu line before the version line".into());
        }
        // The first nine fields, read without allocating (this runs at every sample).
        let mut f = [0u64; 9];
        let mut fields = 0;
        for w in words {
            let v = number(w, key)?;
            if let Some(slot) = f.get_mut(fields) {
                *slot = v;
            }
            fields += 1;
        }
        if fields < 9 {
            return Err(format!("{key}: {fields} fields, expected 9"));
        }
        s.cpus += 1;
        s.yld_count += f[0];
        s.sched_count += f[2];
        s.sched_goidle += f[3];
        s.ttwu_count += f[4];
        s.ttwu_local += f[5];
        s.run_time_ns += f[6];
        s.run_delay_ns += f[7];
        s.timeslices += f[8];
    }
    if s.version == 0 || s.cpus == 0 {
        return Err("no version line or no cpu lines".into());
    }
    Ok(s)
}

pub fn read_schedstat(proc_root: &Path) -> Result<Schedstat, MonitorError> {
    let path = proc_root.join("schedstat");
    parse_schedstat(&read_text(&path)?).map_err(|e| MonitorError::parse(&path, e))
}

/// Parses a cpufreq `scaling_cur_freq` file: the frequency in kHz
/// (Documentation/admin-guide/pm/cpufreq.rst).
pub fn parse_scaling_cur_freq(text: &str) -> Result<u64, String> {
    number(text.trim(), "scaling_cur_freq")
}

/// The `scaling_cur_freq` files of every CPU that has a cpufreq policy, as (cpu, path), in CPU
/// order. Unsupported when no CPU has one (no cpufreq driver, as in most VMs).
pub fn cpufreq_files(sys_root: &Path) -> Result<Vec<(u32, std::path::PathBuf)>, MonitorError> {
    let dir = sys_root.join("devices/system/cpu");
    let entries = std::fs::read_dir(&dir).map_err(|e| MonitorError::from_io(&dir, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| MonitorError::from_io(&dir, e))?;
        let name = entry.file_name();
        let Some(cpu) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let file = entry.path().join("cpufreq/scaling_cur_freq");
        if file.exists() {
            out.push((cpu, file));
        }
    }
    if out.is_empty() {
        return Err(MonitorError::Unsupported {
            what: format!("no cpufreq driver ({}/cpu*/cpufreq absent)", dir.display()),
        });
    }
    out.sort();
    Ok(out)
}

/// Reads the current frequency of every CPU with a cpufreq policy: (cpu, kHz).
pub fn read_cpufreq(sys_root: &Path) -> Result<Vec<(u32, u64)>, MonitorError> {
    cpufreq_files(sys_root)?
        .into_iter()
        .map(|(cpu, path)| {
            let text = read_text(&path)?;
            let khz = parse_scaling_cur_freq(&text).map_err(|e| MonitorError::parse(&path, e))?;
            Ok((cpu, khz))
        })
        .collect()
}

/// One idle state of one CPU, from `cpu<N>/cpuidle/state<K>/` in sysfs
/// (Documentation/admin-guide/pm/cpuidle.rst, "Representation of Idle States").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    pub cpu: u32,
    /// The `K` of `state<K>`: states are numbered from the shallowest.
    pub index: u32,
    /// The state's name (`POLL`, `C1E`, `haltpoll idle`).
    pub name: String,
    /// Exit latency, us: the worst-case time to leave the state (`latency`).
    pub latency_us: u64,
    /// Whether the state is disabled (`disable`), by the user or the driver.
    pub disabled: bool,
    /// The `state<K>` directory, whose `usage` (entries) and `time` (residency, us) count up.
    pub dir: std::path::PathBuf,
}

/// Parses one number of a cpuidle state file (`usage`, `time`, `latency`, `disable`).
pub fn parse_cpuidle_value(text: &str, what: &str) -> Result<u64, String> {
    number(text.trim(), what)
}

/// The idle states of every CPU under `sys_root`, in CPU and state order. Unsupported when no
/// CPU has one: no cpuidle driver registered (some VMs and containers), or `cpuidle.off=1`.
pub fn read_cpuidle_states(sys_root: &Path) -> Result<Vec<IdleState>, MonitorError> {
    let dir = sys_root.join("devices/system/cpu");
    let numbered =
        |path: &Path, prefix: &str| -> Result<Vec<(u32, std::path::PathBuf)>, MonitorError> {
            let entries = std::fs::read_dir(path).map_err(|e| MonitorError::from_io(path, e))?;
            let mut out = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| MonitorError::from_io(path, e))?;
                if let Some(n) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix(prefix))
                    .and_then(|n| n.parse::<u32>().ok())
                {
                    out.push((n, entry.path()));
                }
            }
            out.sort();
            Ok(out)
        };
    let mut states = Vec::new();
    for (cpu, cpu_dir) in numbered(&dir, "cpu")? {
        let idle = cpu_dir.join("cpuidle");
        if !idle.is_dir() {
            continue;
        }
        for (index, state_dir) in numbered(&idle, "state")? {
            let file = |name: &str| read_text(&state_dir.join(name));
            let value = |name: &str| -> Result<u64, MonitorError> {
                let path = state_dir.join(name);
                parse_cpuidle_value(&read_text(&path)?, name)
                    .map_err(|e| MonitorError::parse(&path, e))
            };
            states.push(IdleState {
                cpu,
                index,
                name: file("name")?.trim().to_string(),
                latency_us: value("latency")?,
                // Old kernels have no `disable` file: the state is enabled then.
                disabled: state_dir.join("disable").exists() && value("disable")? != 0,
                dir: state_dir,
            });
        }
    }
    if states.is_empty() {
        return Err(MonitorError::Unsupported {
            what: format!(
                "no cpuidle states ({}/cpu*/cpuidle absent: no cpuidle driver, or cpuidle.off=1)",
                dir.display()
            ),
        });
    }
    Ok(states)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  14332 0 3490 54426 259 0 28 19 0 0\n\
cpu0 6870 0 1653 27652 48 0 5 9 0 0\n\
intr 123456 0 9 0\n\
ctxt 269393\n\
btime 1795353133\n\
processes 9748\n\
procs_running 5\n\
procs_blocked 1\n\
softirq 88092 0 14257 4 4420 10499 0 201 21551 0 37160\n";

    #[test]
    fn parses_proc_stat() {
        let s = parse_proc_stat(STAT).unwrap();
        assert_eq!(s.cpu.user, 14332);
        assert_eq!(s.cpu.steal, 19);
        assert_eq!(s.intr, 123456);
        assert_eq!(s.ctxt, 269393);
        assert_eq!(s.processes, 9748);
        assert_eq!(s.procs_running, 5);
        assert_eq!(s.procs_blocked, 1);
        assert!(parse_proc_stat("cpu  1 2 3 4\nctxt 5\n").is_err());
        assert!(parse_proc_stat(&STAT.replace("ctxt 269393", "ctxt x")).is_err());
    }

    #[test]
    fn parses_vmstat() {
        let v = parse_vmstat("nr_free_pages 123\npgfault 7014178\npgmajfault 998\n").unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[1], ("pgfault".to_string(), 7_014_178));
        assert!(parse_vmstat("nr_free_pages 123\npgfault\n").is_err());
        assert!(parse_vmstat("nr_free_pages x\n").is_err());
        // Only the wanted counters' values are parsed: a bad one elsewhere is no error, a bad
        // wanted one is.
        let mut seen = Vec::new();
        let text = "nr_free_pages x\npgfault  7\n";
        visit_vmstat(
            text,
            |k| k == "pgfault",
            |k, v| seen.push((k.to_string(), v)),
        )
        .unwrap();
        assert_eq!(seen, [("pgfault".to_string(), 7)]);
        assert!(visit_vmstat(text, |k| k == "nr_free_pages", |_, _| ()).is_err());
        assert!(visit_vmstat("", |_| true, |_, _| ()).is_err());
    }

    #[test]
    fn parses_pressure_with_and_without_full() {
        let text = "some avg10=69.90 avg60=37.10 avg300=10.70 total=37519609\n\
full avg10=0.04 avg60=0.21 avg300=0.21 total=1737877\n";
        let p = parse_pressure(text).unwrap();
        assert_eq!(p.some.avg10, 69.90);
        assert_eq!(p.some.total_us, 37_519_609);
        assert_eq!(p.full.unwrap().avg60, 0.21);
        // Linux < 5.13: cpu has no full line.
        let old = parse_pressure("some avg10=1.00 avg60=0.50 avg300=0.10 total=42\n").unwrap();
        assert!(old.full.is_none());
        assert!(parse_pressure("full avg10=0 avg60=0 avg300=0 total=0\n").is_err());
        assert!(parse_pressure("some avg10=x avg60=0 avg300=0 total=0\n").is_err());
    }

    const INTERRUPTS: &str = "           CPU0       CPU1       \n\
  0:         44          0   IO-APIC   2-edge      timer\n\
 26:          3         15  IO-APIC   4-edge      ttyS0\n\
 29:          0          0 PCI-MSIX-0000:00:01.0   1-edge      virtio0-input.0\n\
NMI:          0          0   Non-maskable interrupts\n\
LOC:     204101     199117   Local timer interrupts\n\
RES:       7022       7851   Rescheduling interrupts\n\
ERR:          0\n\
MIS:          0\n";

    #[test]
    fn parses_interrupts_summing_cpus() {
        let irqs = parse_interrupts(INTERRUPTS).unwrap();
        let get = |n: &str| irqs.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(get("0:timer"), Some(44));
        assert_eq!(get("26:ttyS0"), Some(18));
        assert_eq!(get("29:virtio0-input.0"), Some(0));
        assert_eq!(get("LOC"), Some(403_218));
        assert_eq!(get("ERR"), Some(0));
        assert_eq!(irqs.len(), 8);
        assert!(parse_interrupts("no header\n").is_err());
        assert!(parse_interrupts("   CPU0\nLOC: x\n").is_err());
    }

    #[test]
    fn parses_softirqs() {
        let text = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
       TIMER:       7496       6760\n\
         RCU:      19145      18009\n";
        let s = parse_softirqs(text).unwrap();
        assert_eq!(s[1], ("TIMER".to_string(), 14256));
        assert_eq!(s.len(), 3);
    }

    const KVM_INTERRUPTS: &str = include_str!("../tests/fixtures/kvm-2cpu/proc/interrupts");
    const KVM_SOFTIRQS: &str = include_str!("../tests/fixtures/kvm-2cpu/proc/softirqs");
    const FOUR_INTERRUPTS: &str = include_str!("../tests/fixtures/four-cpu/proc/interrupts");
    const FOUR_SOFTIRQS: &str = include_str!("../tests/fixtures/four-cpu/proc/softirqs");

    #[test]
    fn parses_captured_interrupts_per_cpu() {
        let rows = parse_interrupts_per_cpu(KVM_INTERRUPTS).unwrap();
        let get = |n: &str| rows.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("36:virtio1-req.0"), Some(vec![(0, 0), (1, 1_770_396)]));
        assert_eq!(get("LOC"), Some(vec![(0, 2_026_164), (1, 2_112_684)]));
        // ERR and MIS have one system-wide count: no per-CPU row.
        assert!(get("ERR").is_none() && get("MIS").is_none());
        assert_eq!(
            rows.len(),
            parse_interrupts(KVM_INTERRUPTS).unwrap().len() - 2
        );
        let totals = interrupt_cpu_totals(KVM_INTERRUPTS).unwrap();
        let sum = |cpu: usize| rows.iter().map(|(_, v)| v[cpu].1).sum::<u64>();
        assert_eq!(totals, vec![(0, sum(0)), (1, sum(1))]);

        let soft = parse_interrupts_per_cpu(KVM_SOFTIRQS).unwrap();
        assert_eq!(soft.len(), 10);
        assert_eq!(
            soft[1],
            ("TIMER".to_string(), vec![(0, 419_674), (1, 411_253)])
        );
        assert_eq!(soft[9].0, "RCU");
    }

    #[test]
    fn parses_four_cpus_with_odd_lines() {
        let rows = parse_interrupts_per_cpu(FOUR_INTERRUPTS).unwrap();
        let get = |n: &str| rows.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        // Descriptions with spaces and numbers: the handler is the last word.
        assert_eq!(
            get("125:eth0-TxRx-0"),
            Some(vec![(0, 1200), (1, 0), (2, 90_000), (3, 0)])
        );
        assert_eq!(
            get("120:pciehp"),
            Some(vec![(0, 0), (1, 0), (2, 0), (3, 0)])
        );
        assert_eq!(
            get("LOC"),
            Some(vec![
                (0, 1_000_000),
                (1, 1_100_000),
                (2, 1_200_000),
                (3, 1_300_000)
            ])
        );
        assert!(get("ERR").is_none());
        // Summed per line, ERR and MIS keep their single count.
        let summed = parse_interrupts(FOUR_INTERRUPTS).unwrap();
        let total = |n: &str| summed.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!((total("ERR"), total("MIS")), (Some(3), Some(7)));
        assert_eq!(total("126:eth0-TxRx-1"), Some(70_300));
        let totals = interrupt_cpu_totals(FOUR_INTERRUPTS).unwrap();
        assert_eq!(totals.len(), 4);
        // Every per-CPU count, and not ERR or MIS.
        let all: u64 = summed.iter().map(|(_, v)| v).sum();
        assert_eq!(totals.iter().map(|(_, v)| v).sum::<u64>(), all - 10);
        assert_eq!(
            totals[3],
            (
                3,
                4 + 70_000 + 9 + 1_300_000 + 9 + 4 + 20_000 + 6000 + 800 + 30
            )
        );

        let soft = parse_interrupts_per_cpu(FOUR_SOFTIRQS).unwrap();
        assert_eq!(
            soft[3],
            (
                "NET_RX".to_string(),
                vec![(0, 1000), (1, 0), (2, 90_000), (3, 70_000)]
            )
        );
    }

    #[test]
    fn per_cpu_columns_follow_the_header() {
        // CPU2 offline: the columns are CPUs 0, 1 and 3.
        let text = "           CPU0       CPU1       CPU3\n\
 LOC:         10         20         30   Local timer interrupts\n\
 ERR:          1\n";
        let rows = parse_interrupts_per_cpu(text).unwrap();
        assert_eq!(
            rows,
            vec![("LOC".to_string(), vec![(0, 10), (1, 20), (3, 30)])]
        );
        assert_eq!(
            interrupt_cpu_totals(text).unwrap(),
            vec![(0, 10), (1, 20), (3, 30)]
        );
        assert!(parse_interrupts_per_cpu("  CPU0 CPUx\nLOC: 1 2\n")
            .unwrap_err()
            .contains("CPUx"));
        assert!(parse_interrupts_per_cpu("").is_err());
    }

    #[test]
    fn parses_slub_stats() {
        assert_eq!(parse_slub_stat("68000 C0=34000 C1=34000\n"), Ok(68000));
        assert_eq!(parse_slub_stat("0\n"), Ok(0));
        assert!(parse_slub_stat("").is_err());
        assert!(parse_slub_stat("C0=1\n").is_err());
    }

    #[test]
    fn parses_slabinfo_v2() {
        let text = "slabinfo - version: 2.1\n\
# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n\
bio-312               12     12    320   12    1 : tunables    0    0    0 : slabdata      1      1      0\n\
dentry             61803  62097    192   21    1 : tunables    0    0    0 : slabdata   2957   2957      0\n";
        let s = parse_slabinfo(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].name, "dentry");
        assert_eq!(s[1].active_objs, 61803);
        assert_eq!(s[1].objsize, 192);
        assert!(parse_slabinfo("slabinfo - version: 1.1\n").is_err());
        assert!(parse_slabinfo("garbage\n").is_err());
    }

    // Fixtures in the layout of sched-stats.rst; the domain lines differ between versions
    // (v17 names the domain) and must not disturb the cpu lines.
    const SCHEDSTAT_V15: &str = "version 15\ntimestamp 4294892786\n\
cpu0 0 0 1000 400 800 300 5000000 200000 600\n\
domain0 00000003 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36\n\
cpu1 2 0 3000 100 700 200 7000000 100000 900\n\
domain0 00000003 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    #[test]
    fn parses_schedstat_v15_v16_v17() {
        let s = parse_schedstat(SCHEDSTAT_V15).unwrap();
        assert_eq!(s.version, 15);
        assert_eq!(s.cpus, 2);
        assert_eq!(s.yld_count, 2);
        assert_eq!(s.sched_count, 4000);
        assert_eq!(s.sched_goidle, 500);
        assert_eq!(s.ttwu_count, 1500);
        assert_eq!(s.ttwu_local, 500);
        assert_eq!(s.run_time_ns, 12_000_000);
        assert_eq!(s.run_delay_ns, 300_000);
        assert_eq!(s.timeslices, 1500);

        let v16 = SCHEDSTAT_V15.replace("version 15", "version 16");
        assert_eq!(parse_schedstat(&v16).unwrap().sched_count, 4000);
        let v17 = SCHEDSTAT_V15
            .replace("version 15", "version 17")
            .replace("domain0 00000003", "domain0 MC 00000003");
        let s17 = parse_schedstat(&v17).unwrap();
        assert_eq!((s17.version, s17.run_delay_ns), (17, 300_000));

        let v14 = SCHEDSTAT_V15.replace("version 15", "version 14");
        assert!(parse_schedstat(&v14).unwrap_err().contains("not known"));
        assert!(parse_schedstat("version 15\ncpu0 1 2 3\n").is_err());
        assert!(parse_schedstat("timestamp 1\n").is_err());
    }

    #[test]
    fn cpufreq_from_fixture_tree_and_absent_driver() {
        let dir = tempfile::tempdir().unwrap();
        let cpu = dir.path().join("devices/system/cpu");
        for (n, khz) in [(0, "2400000\n"), (1, "800000\n"), (10, "1200000\n")] {
            let d = cpu.join(format!("cpu{n}/cpufreq"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("scaling_cur_freq"), khz).unwrap();
        }
        // A CPU without a policy and a non-CPU entry are skipped.
        std::fs::create_dir_all(cpu.join("cpu2")).unwrap();
        std::fs::create_dir_all(cpu.join("cpuidle")).unwrap();
        let f = read_cpufreq(dir.path()).unwrap();
        assert_eq!(f, vec![(0, 2_400_000), (1, 800_000), (10, 1_200_000)]);
        assert!(parse_scaling_cur_freq("fast").is_err());

        let empty = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(empty.path().join("devices/system/cpu/cpu0")).unwrap();
        assert!(read_cpufreq(empty.path()).unwrap_err().is_unsupported());
    }

    #[test]
    fn reads_real_proc() {
        let root = Path::new("/proc");
        let s = read_proc_stat(root).unwrap();
        assert!(s.ctxt > 0 && s.processes > 0 && s.intr > 0);
        let v = read_vmstat(root).unwrap();
        assert!(v.iter().any(|(k, v)| k == "pgfault" && *v > 0));
        // Pressure stall information needs CONFIG_PSI (and no psi=0 on the command line).
        if root.join("pressure").exists() {
            let p = read_pressure(root, "cpu").unwrap();
            assert!(p.some.avg10 >= 0.0);
            read_pressure(root, "memory").unwrap();
            read_pressure(root, "io").unwrap();
        } else {
            eprintln!("skipped: /proc/pressure is absent (kernel without CONFIG_PSI)");
            assert!(read_pressure(root, "cpu").unwrap_err().is_unsupported());
        }
        let irqs = read_interrupts(root).unwrap();
        // LOC, the local APIC timer, is an x86 row of /proc/interrupts.
        if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
            assert!(irqs.iter().any(|(k, v)| k == "LOC" && *v > 0));
        } else {
            assert!(!irqs.is_empty());
        }
        let soft = read_softirqs(root).unwrap();
        assert!(soft.iter().any(|(k, v)| k == "TIMER" && *v > 0));
        // Absent on this kind of machine; present elsewhere. Either way no panic.
        match read_schedstat(root) {
            Ok(s) => assert!(s.cpus > 0),
            Err(e) => assert!(e.is_unsupported(), "{e}"),
        }
    }
}
