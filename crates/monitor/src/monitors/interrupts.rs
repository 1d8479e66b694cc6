//! The `interrupts` monitor: its registry entry and its reading of /proc/interrupts and /proc/softirqs.

use std::path::PathBuf;
use std::time::Duration;

use super::{buffer, load, top, top_option, Entry};
use crate::procfs::{parse_interrupts, visit_interrupt_lines};
use crate::{top_movers, MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::options::OFF;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue};

/// The option that also records each IRQ line per CPU.
const PER_CPU: &str = "per-cpu";
/// The option of the shortest run sampled ([`Monitor::min_run`]), in seconds.
const MIN_RUN: &str = "min-run";
/// Its default. The kernel takes about 50 us to produce /proc/interrupts once on a 2-vCPU KVM
/// guest (`show_interrupts`, kernel/irq/proc.c, visits every possible IRQ number, 424 there,
/// and formats a column per CPU, so it grows with the CPUs), twice a run: about 1% of a 10 ms
/// run, and with the parsing and storing of its series 0.2-0.3 ms of the harness's 1.3 ms per
/// run of `true` (`bench/harness-cost.sh`), whose interrupt counts are mostly zeros. The
/// `stat` monitor still counts a short run's interrupts (`stat.intr`).
const DEFAULT_MIN_RUN_S: f64 = 0.01;

/// The registry's entry of `interrupts`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "interrupts",
            "/proc/interrupts and /proc/softirqs: totals, per-CPU totals, the top movers",
        )
        .with_options(vec![
            top_option(),
            OptionSpec::new(
                PER_CPU,
                OptionKind::Switch,
                OptionDefault::Value(OptionValue::Text(OFF.into())),
            )
            .help("on: also each IRQ line per CPU, the top movers per CPU"),
            OptionSpec::new(
                MIN_RUN,
                OptionKind::Float {
                    min: 0.0,
                    max: 3600.0,
                },
                OptionDefault::Value(OptionValue::Float(DEFAULT_MIN_RUN_S)),
            )
            .unit("s")
            .help(
                "the shortest run sampled: from a configuration's first shorter run on, none \
                 is (its reads would cost a share of each); 0 samples every run",
            ),
        ]),
        true,
        |options, roots| {
            Box::new(
                InterruptsMonitor::new(roots.proc_root.clone(), top(options))
                    .per_cpu(options.is_on(PER_CPU))
                    .min_run(Duration::from_secs_f64(options.float(MIN_RUN))),
            )
        },
    )
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
    buf: Reader,
    top: usize,
    missing: Vec<(String, String)>,
    names: MetricNames,
    /// Per-CPU sums of the file being read, indexed by CPU number; `None` for CPUs without a
    /// column (offline, or beyond the highest one).
    cpu_totals: Vec<Option<u64>>,
    per_cpu: bool,
    min_run: Duration,
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
            min_run: Duration::ZERO,
        }
    }

    /// Also records every IRQ line of /proc/interrupts per CPU.
    pub fn per_cpu(mut self, on: bool) -> Self {
        self.per_cpu = on;
        self
    }

    /// Samples a configuration's runs only until one lasts less than `min_run`
    /// ([`Monitor::min_run`]); zero (as [`InterruptsMonitor::new`] makes it) samples every run.
    pub fn min_run(mut self, min_run: Duration) -> Self {
        self.min_run = min_run;
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

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
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
        self.names.restart();
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

    fn min_run(&self) -> Duration {
        self.min_run
    }

    fn keep(&self, changes: &[(&str, f64)]) -> Vec<bool> {
        top_movers(changes, self.top, |m| m.ends_with("_total"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::monitors::testing::{fixture, get, sample_once};

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
}
