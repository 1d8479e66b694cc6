//! `system check`: what on this machine threatens the validity of measurements.
//!
//! Every check reads through the injected roots and turns an absent interface into an `info`
//! finding or no finding, never into an error. Two checks sample over a short window
//! ([`CheckOptions::window`]): steal time and CPU use per process. One measures: the cost of
//! a cross-CPU wake-up, by the `pipe` benchmark's ping-pong between two threads (like
//! `perf bench sched pipe`).
//!
//! The sampled and measured checks take a quarter of a second, which `vernier run` would pay
//! before every session. [`system_check_cached`] keeps their findings in a file keyed by the
//! boot id and the check's inputs: the wake-up cost, a property of the machine and kernel, is
//! measured once per boot; the window (steal time now, busy processes), a property of the
//! moment, at most every [`SAMPLED_MAX_AGE`]. A finding taken from the cache says when it was
//! measured.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use vernier_model::finding::{Finding, Severity};
use vernier_sys::procstat::{read_proc_stat_cpu, CpuTimes};

use vernier_sys::{Reads, Roots};

/// How [`system_check_with`] samples and measures.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// Sampling window for steal time and busy processes.
    pub window: Duration,
    /// Run the pipe ping-pong (needs two CPUs this process may use).
    pub measure_wakeups: bool,
    pub round_trips: u32,
    /// Cross-CPU slower than same-CPU by more than this factor is a warning.
    pub wakeup_ratio_warn: f64,
    /// A process using more than this percentage of one CPU in the window is listed.
    pub busy_process_pct: f64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            window: Duration::from_millis(500),
            measure_wakeups: true,
            round_trips: 2000,
            wakeup_ratio_warn: 5.0,
            busy_process_pct: 10.0,
        }
    }
}

/// Result of the pipe ping-pong.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingPong {
    pub cpus: (usize, usize),
    pub same_cpu_ns_per_round_trip: f64,
    pub cross_cpu_ns_per_round_trip: f64,
}

impl PingPong {
    pub fn ratio(&self) -> f64 {
        self.cross_cpu_ns_per_round_trip / self.same_cpu_ns_per_round_trip.max(1.0)
    }
}

/// [`system_check_with`] with the default options.
pub fn system_check(roots: &Roots) -> Vec<Finding> {
    system_check_with(roots, &CheckOptions::default(), &Reads::new())
}

/// Lists the findings, most severe first (stable within a severity). The files that say how
/// the machine is set (governor, turbo, huge pages, sysctls, memory) are read through `reads`:
/// those the environment capture of the same start-up read are not read again.
pub fn system_check_with(roots: &Roots, options: &CheckOptions, reads: &Reads) -> Vec<Finding> {
    assemble(roots, reads, |ncpus| Measured {
        sampled: sampled_findings(roots, options, ncpus),
        per_boot: PerBoot::measure(roots, options),
    })
}

/// How long [`system_check_cached`] reuses the findings of the sampling window.
pub const SAMPLED_MAX_AGE: Duration = Duration::from_secs(600);

/// [`system_check_with`], with the findings of the sampling window and the wake-up measurement
/// taken from the cache file `cache` when it holds them for this boot and these inputs (the
/// window's only while younger than [`SAMPLED_MAX_AGE`]), and stored there otherwise. Without a
/// boot id it measures every time; a cache that cannot be read is measured anew, one that
/// cannot be written is left as it is: the cache only saves time.
pub fn system_check_cached(
    roots: &Roots,
    options: &CheckOptions,
    cache: &Path,
    reads: &Reads,
) -> Vec<Finding> {
    let Some(boot_id) = read(reads, &roots.proc_root.join("sys/kernel/random/boot_id")) else {
        return system_check_with(roots, options, reads);
    };
    let key = CacheKey {
        boot_id: boot_id.trim().to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        proc_root: roots.proc_root.clone(),
        sys_root: roots.sys_root.clone(),
        cpus: vernier_sys::affinity::current_affinity().unwrap_or_default(),
        window_ms: u64::try_from(options.window.as_millis()).unwrap_or(u64::MAX),
        measure_wakeups: options.measure_wakeups,
        round_trips: options.round_trips,
        wakeup_ratio_warn: options.wakeup_ratio_warn,
        busy_process_pct: options.busy_process_pct,
    };
    let now = unix_s();
    let cached = std::fs::read(cache)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<CacheFile>(&bytes).ok())
        .filter(|c| c.key == key);
    assemble(roots, reads, |ncpus| {
        let fresh = |at: u64, max_age: Option<Duration>| {
            at <= now && max_age.is_none_or(|m| now - at <= m.as_secs())
        };
        let sampled_cached = cached
            .as_ref()
            .filter(|c| fresh(c.sampled_at_s, Some(SAMPLED_MAX_AGE)));
        let per_boot_cached = cached.as_ref().filter(|c| fresh(c.per_boot_at_s, None));
        let (sampled, sampled_at) = match sampled_cached {
            Some(c) => (c.sampled.clone(), c.sampled_at_s),
            None => (sampled_findings(roots, options, ncpus), now),
        };
        let (per_boot, per_boot_at) = match per_boot_cached {
            Some(c) => (c.per_boot.clone(), c.per_boot_at_s),
            None => (PerBoot::measure(roots, options), now),
        };
        if sampled_cached.is_none() || per_boot_cached.is_none() {
            let file = CacheFile {
                key: key.clone(),
                sampled_at_s: sampled_at,
                sampled: sampled.clone(),
                per_boot_at_s: per_boot_at,
                per_boot: per_boot.clone(),
            };
            let _ = write_cache(cache, &file);
        }
        let mark = |findings: Vec<Finding>, at: u64, how: &str| {
            findings
                .into_iter()
                .map(|mut f| {
                    f.detail = format!("{} [{how}; measured {} s ago]", f.detail, now - at);
                    f
                })
                .collect::<Vec<_>>()
        };
        Measured {
            sampled: match sampled_cached {
                Some(_) => mark(sampled, sampled_at, "cached"),
                None => sampled,
            },
            per_boot: match per_boot_cached {
                // What the hypervisor is needs no age: only the measured wake-up cost has one.
                Some(_) => PerBoot {
                    virtualization: per_boot.virtualization,
                    wakeups: mark(per_boot.wakeups, per_boot_at, "cached for this boot"),
                },
                None => per_boot,
            },
        }
    })
}

/// The findings that are measured rather than read at once: those of the sampling window,
/// and those that hold for a whole boot.
struct Measured {
    sampled: Vec<Finding>,
    per_boot: PerBoot,
}

/// What holds for a boot: the hypervisor, and the cost of a cross-CPU wake-up (a property
/// of the machine and the kernel).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PerBoot {
    virtualization: Vec<Finding>,
    wakeups: Vec<Finding>,
}

impl PerBoot {
    fn measure(roots: &Roots, options: &CheckOptions) -> Self {
        let mut virtualization = Vec::new();
        check_virtualization(roots, &mut virtualization);
        let mut wakeups = Vec::new();
        if options.measure_wakeups {
            check_wakeups(options, &mut wakeups);
        }
        PerBoot {
            virtualization,
            wakeups,
        }
    }
}

/// What the cached findings were measured with; any change measures anew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CacheKey {
    boot_id: String,
    version: String,
    proc_root: PathBuf,
    sys_root: PathBuf,
    /// The CPUs this process may use: the ping-pong runs on the first two.
    cpus: Vec<usize>,
    window_ms: u64,
    measure_wakeups: bool,
    round_trips: u32,
    wakeup_ratio_warn: f64,
    busy_process_pct: f64,
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    key: CacheKey,
    sampled_at_s: u64,
    sampled: Vec<Finding>,
    per_boot_at_s: u64,
    per_boot: PerBoot,
}

fn unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Writes the cache through a temporary file renamed into place, so that a concurrent reader
/// sees the old or the new file, never half of one.
fn write_cache(path: &Path, file: &CacheFile) -> std::io::Result<()> {
    vernier_sys::write_file_atomic(path, &serde_json::to_vec(file)?)
}

/// Runs the instant checks and takes the sampled and measured findings from `measured`
/// (called with the number of online CPUs), in the order of a full check.
fn assemble(
    roots: &Roots,
    reads: &Reads,
    measured: impl FnOnce(usize) -> Measured,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let online = vernier_sys::cpulist::read_online_cpus(&roots.sys_root).ok();
    let ncpus = online.as_ref().map(|c| c.len()).unwrap_or(1).max(1);

    let Measured { sampled, per_boot } = measured(ncpus);
    check_governor(roots, reads, online.as_deref(), &mut findings);
    check_turbo(roots, reads, &mut findings);
    findings.extend(per_boot.virtualization);
    findings.extend(sampled);
    check_swap(roots, reads, &mut findings);
    check_load(roots, ncpus, &mut findings);
    check_sysctls_and_thp(roots, reads, &mut findings);
    check_isolation(roots, reads, &mut findings);
    findings.extend(per_boot.wakeups);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        findings.push(
            Finding::new(
                "not-root",
                Severity::Info,
                "not running as root",
                "setup plugins and `system tune` need root to change the system",
            )
            .with_fix("run vernier as root (sudo)"),
        );
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

fn sampled_findings(roots: &Roots, options: &CheckOptions, ncpus: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    check_sampled(roots, options, ncpus, &mut out);
    out
}

fn read(reads: &Reads, path: &Path) -> Option<String> {
    reads.read(path).ok()
}

fn check_governor(roots: &Roots, reads: &Reads, online: Option<&[usize]>, out: &mut Vec<Finding>) {
    let cpu_dir = roots.sys_root.join("devices/system/cpu");
    let cpus = online.unwrap_or(&[0]);
    let governors: Vec<(usize, String)> = cpus
        .iter()
        .filter_map(|&c| {
            read(
                reads,
                &cpu_dir.join(format!("cpu{c}/cpufreq/scaling_governor")),
            )
            .map(|g| (c, g.trim().to_string()))
        })
        .collect();
    if governors.is_empty() {
        out.push(Finding::new(
            "no-cpufreq",
            Severity::Info,
            "no cpufreq driver",
            "CPU frequency is managed by firmware or the hypervisor: it can be neither set nor \
             observed, so frequency changes are invisible in the results",
        ));
        return;
    }
    let slow: Vec<String> = governors
        .iter()
        .filter(|(_, g)| g != "performance")
        .map(|(c, g)| format!("cpu{c}={g}"))
        .collect();
    if !slow.is_empty() {
        out.push(
            Finding::new(
                "governor",
                Severity::Warning,
                "CPU governor is not performance",
                format!(
                    "{}: frequency ramps add their reaction time to short benchmarks",
                    slow.join(", ")
                ),
            )
            .with_fix("vernier system tune, or --setup governor"),
        );
    }
}

fn check_turbo(roots: &Roots, reads: &Reads, out: &mut Vec<Finding>) {
    let cpu_dir = roots.sys_root.join("devices/system/cpu");
    let on = match (
        read(reads, &cpu_dir.join("intel_pstate/no_turbo")),
        read(reads, &cpu_dir.join("cpufreq/boost")),
    ) {
        (Some(nt), _) if nt.trim() == "0" => Some("intel_pstate/no_turbo = 0"),
        (_, Some(b)) if b.trim() == "1" => Some("cpufreq/boost = 1"),
        _ => None,
    };
    if let Some(what) = on {
        out.push(
            Finding::new(
                "turbo",
                Severity::Warning,
                "turbo/boost is on",
                format!(
                    "{what}: turbo frequency depends on temperature, power budget and the number \
                     of busy cores, so it drifts within and between runs"
                ),
            )
            .with_fix("vernier system tune, or --setup turbo"),
        );
    }
}

/// A guest shares its host: one detector of the hypervisor, the environment's
/// (`vernier_sys::environment::hypervisor`), so that the warning and the recorded
/// environment never disagree.
fn check_virtualization(roots: &Roots, out: &mut Vec<Finding>) {
    if let Some(hypervisor) = vernier_sys::environment::hypervisor(roots) {
        out.push(
            Finding::new(
                "virtual-machine",
                Severity::Warning,
                "virtual machine",
                format!(
                    "{hypervisor} guest: other guests share the host, vCPUs can be descheduled \
                     (steal, stalls that steal time does not show) and cross-CPU wake-ups go \
                     through the hypervisor"
                ),
            )
            .with_fix("compare only runs taken side by side on the same host, or use bare metal"),
        );
    }
}

/// utime + stime of a /proc/PID/stat line (proc(5)), with the command name.
fn parse_pid_stat(text: &str) -> Option<(String, u64)> {
    let stat = vernier_sys::process::parse_pid_stat(text)?;
    Some((stat.comm, stat.utime + stat.stime))
}

fn read_pid_times(proc_root: &Path) -> BTreeMap<u32, (String, u64)> {
    let mut times = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return times;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // Sampled twice over the window: read afresh each time, never through a `Reads`.
        let stat = vernier_sys::read_file(&entry.path().join("stat")).ok();
        if let Some(t) = stat.and_then(|s| parse_pid_stat(&s)) {
            times.insert(pid, t);
        }
    }
    times
}

fn pct(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

fn total(t: &CpuTimes) -> u64 {
    t.busy() + t.idle + t.iowait + t.steal
}

/// Steal time (now and since boot) and the processes that used CPU during the window.
fn check_sampled(roots: &Roots, options: &CheckOptions, ncpus: usize, out: &mut Vec<Finding>) {
    let a = read_proc_stat_cpu(&roots.proc_root).ok();
    let pids_a = read_pid_times(&roots.proc_root);
    let start = Instant::now();
    std::thread::sleep(options.window);
    let elapsed = start.elapsed().as_secs_f64();
    let b = read_proc_stat_cpu(&roots.proc_root).ok();
    let pids_b = read_pid_times(&roots.proc_root);

    if let (Some(a), Some(b)) = (a, b) {
        let window_steal = pct(
            b.steal.saturating_sub(a.steal),
            total(&b).saturating_sub(total(&a)),
        );
        let boot_steal = pct(b.steal, total(&b));
        if window_steal >= 1.0 {
            out.push(Finding::new(
                "steal",
                Severity::Warning,
                "steal time now",
                format!(
                    "{window_steal:.1}% of CPU time was stolen by the hypervisor in the last {:.0} ms \
                     ({boot_steal:.2}% since boot): runs lose CPU time they do not see",
                    elapsed * 1000.0
                ),
            ));
        } else if b.steal > 0 {
            out.push(Finding::new(
                "steal",
                Severity::Info,
                "steal time since boot",
                format!(
                    "{boot_steal:.2}% of CPU time was stolen by the hypervisor since boot \
                     ({window_steal:.1}% in the last {:.0} ms)",
                    elapsed * 1000.0
                ),
            ));
        }
    }

    let hz = vernier_sys::clock::clock_ticks_per_second() as f64;
    let me = std::process::id();
    let mut busy: Vec<(f64, u32, String)> = pids_b
        .iter()
        .filter(|(pid, _)| **pid != me)
        .filter_map(|(pid, (comm, t1))| {
            let t0 = pids_a.get(pid).map(|(_, t)| *t)?;
            let used = 100.0 * t1.saturating_sub(t0) as f64 / hz / elapsed.max(1e-3);
            (used > options.busy_process_pct).then(|| (used, *pid, comm.clone()))
        })
        .collect();
    busy.sort_by(|x, y| y.0.total_cmp(&x.0));
    if !busy.is_empty() {
        let list: Vec<String> = busy
            .iter()
            .take(5)
            .map(|(u, pid, comm)| format!("{comm} (pid {pid}) {u:.0}%"))
            .collect();
        let sum: f64 = busy.iter().map(|b| b.0).sum();
        let severity = if sum >= 50.0 * ncpus as f64 {
            Severity::Critical
        } else {
            Severity::Warning
        };
        out.push(
            Finding::new(
                "busy-processes",
                severity,
                "other processes are using CPU",
                format!(
                    "{} in the last {:.0} ms (percent of one CPU; {ncpus} CPUs online)",
                    list.join(", "),
                    elapsed * 1000.0
                ),
            )
            .with_fix("stop them, or use --setup idle-gate to wait for a quiet machine"),
        );
    }
}

fn check_swap(roots: &Roots, reads: &Reads, out: &mut Vec<Finding>) {
    let Some(meminfo) = read(reads, &roots.proc_root.join("meminfo"))
        .and_then(|t| vernier_sys::meminfo::parse_meminfo(&t).ok())
    else {
        return;
    };
    // The message counts KiB, as free(1) and /proc/meminfo do.
    let field = |name: &str| meminfo.get(name).map(|bytes| bytes / 1024);
    if let (Some(total), Some(free)) = (field("SwapTotal"), field("SwapFree")) {
        let used = total.saturating_sub(free);
        if used > 0 {
            out.push(
                Finding::new(
                    "swap-in-use",
                    Severity::Warning,
                    "swap in use",
                    format!(
                        "{used} KiB of {total} KiB swap is in use: page-ins can land in any run"
                    ),
                )
                .with_fix("--setup swap-reset, or swapoff -a && swapon -a"),
            );
        }
    }
}

fn check_load(roots: &Roots, ncpus: usize, out: &mut Vec<Finding>) {
    let Ok(load) = vernier_sys::loadavg::read_loadavg(&roots.proc_root).map(|l| l.load_1m) else {
        return;
    };
    let per_cpu = load / ncpus as f64;
    if per_cpu >= 0.5 {
        out.push(
            Finding::new(
                "high-load",
                if per_cpu >= 1.0 {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                "high load",
                format!("1-minute load average {load:.2} on {ncpus} CPUs"),
            )
            .with_fix("wait for the machine to settle, or use --setup cooldown:load=0.2"),
        );
    }
}

fn check_sysctls_and_thp(roots: &Roots, reads: &Reads, out: &mut Vec<Finding>) {
    let sysctl = |name: &str| {
        read(reads, &roots.proc_root.join("sys").join(name)).map(|v| v.trim().to_string())
    };
    if let Some(thp) = read(
        reads,
        &roots
            .sys_root
            .join("kernel/mm/transparent_hugepage/enabled"),
    ) {
        let mode = thp
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
            .unwrap_or("unknown")
            .to_string();
        if mode == "always" {
            out.push(Finding::new(
                "thp",
                Severity::Info,
                "transparent huge pages: always",
                "whether a region gets huge pages depends on alignment, fragmentation and \
                 khugepaged timing, which varies between runs of memory-heavy benchmarks \
                 (Documentation/admin-guide/mm/transhuge.rst); keep the setting identical \
                 between compared runs",
            ));
        }
    }
    if let Some(v) = sysctl("kernel/randomize_va_space") {
        if v != "0" {
            out.push(
                Finding::new(
                    "aslr",
                    Severity::Info,
                    "address space layout randomization is on",
                    format!(
                        "kernel.randomize_va_space = {v}: code, stack and heap addresses change \
                         every run, which can make cache and branch-predictor effects bimodal"
                    ),
                )
                .with_fix("run the benchmark under `setarch -R` (per process; vernier system tune leaves ASLR on for security)"),
            );
        }
    }
    if let Some(v) = sysctl("kernel/timer_migration") {
        if v != "0" {
            out.push(
                Finding::new(
                    "timer-migration",
                    Severity::Info,
                    "timer migration is on",
                    "kernel.timer_migration = 1: timers may be moved to other CPUs and wake them \
                     (Documentation/admin-guide/sysctl/kernel.rst)",
                )
                .with_fix("vernier system tune, or sysctl kernel.timer_migration=0"),
            );
        }
    }
}

fn check_isolation(roots: &Roots, reads: &Reads, out: &mut Vec<Finding>) {
    let isolated = read(reads, &roots.sys_root.join("devices/system/cpu/isolated"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let cmdline = read(reads, &roots.proc_root.join("cmdline")).unwrap_or_default();
    let on_cmdline = cmdline
        .split_whitespace()
        .any(|w| w.starts_with("isolcpus=") || w.starts_with("nohz_full="));
    if isolated.is_empty() && !on_cmdline {
        out.push(
            Finding::new(
                "no-isolated-cpus",
                Severity::Info,
                "no isolated CPUs",
                "every CPU runs the scheduler's other work, kernel threads and interrupts; \
                 latency benchmarks see them",
            )
            .with_fix(
                "boot with isolcpus=/nohz_full= and pin the benchmark there (--setup pin:cpus=N)",
            ),
        );
    }
}

fn check_wakeups(options: &CheckOptions, out: &mut Vec<Finding>) {
    let cpus = vernier_sys::affinity::current_affinity().unwrap_or_default();
    if cpus.len() < 2 {
        return;
    }
    match measure_ping_pong(cpus[0], cpus[1], options.round_trips) {
        Ok(p) => {
            let ratio = p.ratio();
            let detail = format!(
                "pipe ping-pong, {} round trips: cpu{} <-> cpu{} {:.1} us, both on cpu{} {:.1} us \
                 per round trip ({ratio:.1}x)",
                options.round_trips,
                p.cpus.0,
                p.cpus.1,
                p.cross_cpu_ns_per_round_trip / 1000.0,
                p.cpus.0,
                p.same_cpu_ns_per_round_trip / 1000.0
            );
            if ratio > options.wakeup_ratio_warn {
                out.push(
                    Finding::new(
                        "cross-cpu-wakeup",
                        Severity::Warning,
                        "cross-CPU wake-ups are expensive",
                        format!(
                            "{detail}: results of communicating tasks depend on where the \
                             scheduler puts them; pin them explicitly and record the placement"
                        ),
                    )
                    .with_fix("--setup pin:cpus=N, or benchmark options that place tasks"),
                );
            } else {
                out.push(Finding::new(
                    "cross-cpu-wakeup",
                    Severity::Info,
                    "cross-CPU wake-up cost",
                    detail,
                ));
            }
        }
        Err(e) => out.push(Finding::new(
            "cross-cpu-wakeup",
            Severity::Info,
            "cross-CPU wake-up cost not measured",
            e,
        )),
    }
}

/// Round trips over two pipes between two threads (the `pipe` benchmark's own code,
/// [`vernier_sys::pingpong::thread_round_trip_ns`]); the first thread runs on `cpu_a`, the second
/// on `cpu_b`, and then both on `cpu_a`. Each half starts with a short warmup that is not
/// timed. Returns the time per round trip of each placement.
pub fn measure_ping_pong(cpu_a: usize, cpu_b: usize, round_trips: u32) -> Result<PingPong, String> {
    let loops = u64::from(round_trips.max(1));
    let warmup = (loops / 10).max(10);
    let measure = |cpus| {
        vernier_sys::pingpong::thread_round_trip_ns(cpus, warmup, loops).map_err(|e| e.to_string())
    };
    let cross = measure([cpu_a, cpu_b])?;
    let same = measure([cpu_a, cpu_a])?;
    Ok(PingPong {
        cpus: (cpu_a, cpu_b),
        same_cpu_ns_per_round_trip: same,
        cross_cpu_ns_per_round_trip: cross,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fixture::{self, write};

    fn quick() -> CheckOptions {
        CheckOptions {
            window: Duration::from_millis(10),
            measure_wakeups: false,
            ..CheckOptions::default()
        }
    }

    fn ids(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn finds_every_threat_in_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        write(root, "proc/loadavg", "1.50 1.00 0.50 3/100 4242\n");
        let findings = system_check_with(&roots, &quick(), &Reads::new());
        let got = ids(&findings);
        for id in [
            "governor",
            "turbo",
            "virtual-machine",
            "steal",
            "swap-in-use",
            "high-load",
            "thp",
            "aslr",
            "timer-migration",
            "no-isolated-cpus",
        ] {
            assert!(got.contains(&id), "{id} missing from {got:?}");
        }
        assert!(!got.contains(&"no-cpufreq"));
        let vm = findings.iter().find(|f| f.id == "virtual-machine").unwrap();
        assert_eq!(vm.title, "virtual machine");
        let swap = findings.iter().find(|f| f.id == "swap-in-use").unwrap();
        assert!(
            swap.detail.starts_with("1024 KiB of 2048 KiB"),
            "{}",
            swap.detail
        );
        let gov = findings.iter().find(|f| f.id == "governor").unwrap();
        assert!(gov.detail.contains("cpu0=powersave, cpu1=powersave"));
        // 1.5 on 2 CPUs is a warning, sorted before the infos.
        let load = findings.iter().find(|f| f.id == "high-load").unwrap();
        assert_eq!(load.severity, Severity::Warning);
        assert!(findings.windows(2).all(|w| w[0].severity >= w[1].severity));
    }

    #[test]
    fn cached_findings_are_reused_for_the_same_boot_and_inputs_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        write(root, "proc/sys/kernel/random/boot_id", "boot-a\n");
        let cache = root.join("cache/vernier/system-check.json");
        let options = CheckOptions {
            round_trips: 20,
            ..quick()
        };
        let load =
            || -> CacheFile { serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap() };
        let save = |file: &CacheFile| std::fs::write(&cache, serde_json::to_vec(file).unwrap());
        let detail = |findings: &[Finding], id: &str| {
            findings
                .iter()
                .find(|f| f.id == id)
                .map(|f| f.detail.clone())
        };
        // Marks what is in the cache, so that a reuse shows.
        let plant = |sampled_age_s: u64| {
            let mut file = load();
            file.sampled = vec![Finding::new("steal", Severity::Info, "t", "planted")];
            file.sampled_at_s = unix_s() - sampled_age_s;
            file.per_boot.wakeups = vec![Finding::new(
                "cross-cpu-wakeup",
                Severity::Info,
                "t",
                "planted",
            )];
            file.key.measure_wakeups = true;
            save(&file).unwrap();
        };
        let wakeups_on = CheckOptions {
            measure_wakeups: true,
            ..options.clone()
        };

        let first = system_check_cached(&roots, &options, &cache, &Reads::new());
        assert!(detail(&first, "steal").unwrap().contains("since boot"));
        assert_eq!(load().key.boot_id, "boot-a");

        // Same boot, same inputs: both parts come from the cache and say so.
        plant(0);
        let again = system_check_cached(&roots, &wakeups_on, &cache, &Reads::new());
        let steal = detail(&again, "steal").unwrap();
        assert!(steal.starts_with("planted [cached; measured"), "{steal}");
        let wake = detail(&again, "cross-cpu-wakeup").unwrap();
        assert!(wake.starts_with("planted [cached for this boot"), "{wake}");
        // The hypervisor is read once per boot: not even /proc/cpuinfo again.
        let cpuinfo = std::fs::read(root.join("proc/cpuinfo")).unwrap();
        std::fs::remove_file(root.join("proc/cpuinfo")).unwrap();
        let unread = system_check_cached(&roots, &wakeups_on, &cache, &Reads::new());
        assert!(detail(&unread, "virtual-machine").is_some());
        assert!(detail(
            &system_check_with(&roots, &options, &Reads::new()),
            "virtual-machine"
        )
        .is_none());
        std::fs::write(root.join("proc/cpuinfo"), cpuinfo).unwrap();

        // The window is measured anew once it is too old; the wake-up cost is kept.
        plant(SAMPLED_MAX_AGE.as_secs() + 1);
        let later = system_check_cached(&roots, &wakeups_on, &cache, &Reads::new());
        assert!(detail(&later, "steal").unwrap().contains("since boot"));
        assert!(detail(&later, "cross-cpu-wakeup")
            .unwrap()
            .starts_with("planted"));
        assert!(load().sampled_at_s + 5 >= unix_s());

        // Other inputs, or another boot: everything is measured anew.
        plant(0);
        let other = CheckOptions {
            round_trips: 30,
            ..wakeups_on.clone()
        };
        let changed = system_check_cached(&roots, &other, &cache, &Reads::new());
        assert!(!detail(&changed, "steal").unwrap().starts_with("planted"));
        assert_ne!(
            detail(&changed, "cross-cpu-wakeup").as_deref(),
            Some("planted")
        );
        plant(0);
        write(root, "proc/sys/kernel/random/boot_id", "boot-b\n");
        let rebooted = system_check_cached(&roots, &wakeups_on, &cache, &Reads::new());
        assert!(!detail(&rebooted, "steal").unwrap().starts_with("planted"));
        assert_eq!(load().key.boot_id, "boot-b");

        // No boot id: measured every time, nothing cached.
        std::fs::remove_file(root.join("proc/sys/kernel/random/boot_id")).unwrap();
        std::fs::remove_file(&cache).unwrap();
        let unkeyed = system_check_cached(&roots, &options, &cache, &Reads::new());
        assert!(detail(&unkeyed, "steal").is_some());
        assert!(!cache.exists());
    }

    #[test]
    fn a_tuned_bare_metal_tree_has_no_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        for cpu in 0..2 {
            write(
                root,
                &format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
                "performance\n",
            );
        }
        write(root, "sys/devices/system/cpu/cpufreq/boost", "0\n");
        write(root, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme\n");
        write(root, "proc/stat", "cpu  100 0 50 1000 5 0 1 0 0 0\n");
        write(
            root,
            "proc/meminfo",
            "SwapTotal: 2048 kB\nSwapFree: 2048 kB\n",
        );
        write(root, "proc/sys/kernel/timer_migration", "0\n");
        write(root, "proc/sys/kernel/randomize_va_space", "0\n");
        write(root, "proc/cmdline", "ro isolcpus=1 nohz_full=1\n");
        write(
            root,
            "sys/kernel/mm/transparent_hugepage/enabled",
            "always [madvise] never\n",
        );
        let findings = system_check_with(&roots, &quick(), &Reads::new());
        let got: Vec<&str> = ids(&findings)
            .into_iter()
            .filter(|id| *id != "not-root")
            .collect();
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn missing_interfaces_are_info_not_errors() {
        let dir = tempfile::tempdir().unwrap();
        let findings = system_check_with(&Roots::under(dir.path()), &quick(), &Reads::new());
        assert!(ids(&findings).contains(&"no-cpufreq"));
        assert!(findings.iter().all(|f| f.severity == Severity::Info));
    }

    #[test]
    fn parses_pid_stat_with_spaces_and_parens_in_comm() {
        let line = "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 100 0 0 0 17 5 0 0 20 0 1 0 \
                    123 4096 100 18446744073709551615";
        assert_eq!(parse_pid_stat(line), Some(("my (odd) proc".into(), 22)));
        assert_eq!(parse_pid_stat("1 (x) S 1 2"), None);
    }

    #[test]
    fn real_machine_wakeup_measurement() {
        let cpus = vernier_sys::affinity::current_affinity().unwrap();
        if cpus.len() < 2 {
            eprintln!("skipped: a cross-CPU ping-pong needs two CPUs");
            return;
        }
        let p = measure_ping_pong(cpus[0], cpus[1], 200).unwrap();
        assert!(p.same_cpu_ns_per_round_trip > 0.0);
        assert!(p.cross_cpu_ns_per_round_trip > 0.0);
        assert!(p.ratio().is_finite());
    }
}
