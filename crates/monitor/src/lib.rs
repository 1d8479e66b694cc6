//! Monitors sampled in the controller process while a run's child works, and the sampler
//! that records them ([`RunSampler`]).
//!
//! A [`Monitor`] reads one interface (/proc/stat, PSI, perf_event, ...) and returns raw
//! readings; the sampler turns them into [`vernier_model::monitor::MonitorSeries`] and a
//! per-run summary. Parsers are pure `parse_<file>(&str)` functions; readers take the /proc or
//! /sys root, so tests run on fixture trees. A missing interface is
//! [`MonitorError::Unsupported`], recorded as a value in the run's data, never a failed run.
//!
//! Use per run: validate the `--monitor` text with [`parse_monitor_list`] (or take
//! [`default_monitors`]) when the plan is built; for each run fork the child and hold it (on a
//! pipe) before its work, call [`RunSampler::start`] with its pid (this opens the perf counters
//! and takes the start sample), release the child, wait for it, then [`RunSampler::finish`].
//! The engine keeps a [`MonitorSet`] per configuration instead ([`RunSampler::start_set`],
//! [`RunSampler::finish_set`]), so that the monitors that only read files are built and
//! started once, and each of its runs reads every file twice, with pread(2) ([`Reader`]).
//!
//! Cost, measured by `bench/monitor-overhead.sh` on a 2-vCPU KVM guest: the default monitors
//! take about 110 us of CPU per sampling round and about 0.9 ms per run for start, end and
//! bookkeeping, i.e. 0.04% of one CPU at 1 s and 0.4% at 100 ms; `slab` alone costs 250-600 us
//! per sample, which is why it is not in the default set. The per-CPU monitors of latency runs
//! grow with the machine: `softirqs` costs about 20 us per sample there (ten series per CPU),
//! `cpuidle` about 65 us (two files read per CPU and idle state, four series each).

mod error;
pub mod monitors;
pub mod perf;
pub mod procfs;
pub mod sampler;
pub mod spec;

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

pub use error::MonitorError;
pub use monitors::registry;
pub use sampler::{BusyTicks, MonitorSet, RunSampler};
pub use spec::{default_monitors, parse_monitor_list, MonitorSpec};
pub use vernier_model::monitor::{RunMonitorData, SeriesKind};

/// A metric name shared by all readings of the metric: cloning it counts a reference.
pub type Metric = Arc<str>;

/// The metric names of one monitor, each made once, when first seen, and then shared by every
/// reading of it, so that a sample allocates no names. Composite names (`irq.<label>`) are
/// formatted into a scratch buffer that keeps its capacity, and looked up there.
///
/// A monitor asks for its names in the same order at every sample: after [`restart`], the
/// n-th name asked for is first compared with the n-th of the last sample, which finds it
/// without hashing it; only a name that differs there is looked up in the set.
///
/// [`restart`]: MetricNames::restart
#[derive(Debug, Default)]
pub struct MetricNames {
    names: HashSet<Metric>,
    scratch: String,
    /// The names in the order the last sample asked for them.
    order: Vec<Metric>,
    /// How many names this sample has asked for.
    next: usize,
}

/// The most names [`MetricNames`] remembers the order of: a monitor that never restarts
/// (or has more names) looks the rest up in its set.
const ORDER_LIMIT: usize = 4096;

impl MetricNames {
    /// Starts a sample: the next name asked for is compared with the first of the last one.
    pub fn restart(&mut self) {
        self.next = 0;
    }

    /// The shared name `name`.
    pub fn get(&mut self, name: &str) -> Metric {
        let mut position = self.next;
        if position == self.order.len() && self.order.first().is_some_and(|m| **m == *name) {
            // Past the last sample's names, the first one again: a monitor that does not
            // restart has begun its next sample.
            position = 0;
        }
        self.next = position.saturating_add(1);
        if let Some(m) = self.order.get(position).filter(|m| ***m == *name) {
            return Arc::clone(m);
        }
        let m = match self.names.get(name) {
            Some(m) => Arc::clone(m),
            None => {
                let m: Metric = Arc::from(name);
                self.names.insert(Arc::clone(&m));
                m
            }
        };
        if position < self.order.len() {
            self.order[position] = Arc::clone(&m);
        } else if position == self.order.len() && position < ORDER_LIMIT {
            self.order.push(Arc::clone(&m));
        }
        m
    }

    /// The shared name that `args` formats to (`format_args!("irq.{label}")`).
    pub fn format(&mut self, args: std::fmt::Arguments<'_>) -> Metric {
        use std::fmt::Write;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        // Writing into a String cannot fail.
        let _ = scratch.write_fmt(args);
        let m = self.get(&scratch);
        self.scratch = scratch;
        m
    }

    /// How many names have been made.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One raw value read by a monitor. Counters are the kernel's cumulative values; the sampler
/// stores them as the increase since the first sample of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// Metric name, unit suffix included when the unit is not a plain count (`user_ns`);
    /// monitors take it from their [`MetricNames`], so that sampling allocates no names.
    pub metric: Metric,
    pub unit: &'static str,
    pub kind: SeriesKind,
    pub value: f64,
}

impl Reading {
    pub fn counter(metric: impl Into<Metric>, unit: &'static str, value: f64) -> Self {
        Reading {
            metric: metric.into(),
            unit,
            kind: SeriesKind::Counter,
            value,
        }
    }

    pub fn gauge(metric: impl Into<Metric>, unit: &'static str, value: f64) -> Self {
        Reading {
            metric: metric.into(),
            unit,
            kind: SeriesKind::Gauge,
            value,
        }
    }
}

/// A source of readings sampled during a run: `start` and the start and end samples in the
/// thread that starts and finishes the [`RunSampler`], the interval samples on its interval
/// thread (the monitor is `Send`; never two calls at once).
pub trait Monitor: Send {
    /// The registry name (`stat`, `perf`, ...), also the `monitor` of its series.
    fn name(&self) -> &'static str;

    /// Prepares sampling of a run whose child process is `child_pid` (only `perf` uses it).
    /// [`MonitorError::Unsupported`] means the whole monitor cannot work here.
    fn start(&mut self, child_pid: i32) -> Result<(), MonitorError>;

    /// Appends the current readings to `out` (which the sampler reuses between samples). Runs
    /// at every sample: it is to allocate nothing once the first sample
    /// has made the monitor's names and buffers (see [`MetricNames`]).
    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError>;

    /// Parts of the monitor that are unsupported although the monitor works (one perf
    /// counter, one PSI resource): (metric, reason). Asked once, after `start`.
    fn unsupported(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Whether the monitor, once started, may sample the next run of the same configuration
    /// without being built and started again ([`crate::sampler::MonitorSet`]): true for one
    /// that only reads files found at its start; false (the default) for one whose start
    /// belongs to the run, such as `perf`, whose counters count the run's process.
    fn reusable(&self) -> bool {
        false
    }

    /// The machine's busy CPU time in clock ticks (/proc/stat, proc(5)) as its last sample read
    /// it, for a monitor that reads it (`stat`); `None` for any other, or after a failed
    /// sample. The engine's run clocks take it from the start and end samples
    /// ([`RunSampler::machine_busy_ticks`]) instead of reading /proc/stat again at each.
    fn machine_busy_ticks(&self) -> Option<u64> {
        None
    }

    /// The shortest run the monitor samples. From the first run of a configuration that was
    /// shorter, from its start sample to its end sample, the monitor samples none: that run's
    /// series are dropped and the later runs do not read it; each records why in its
    /// `unsupported`. (A configuration's first run may be longer than the rest, when it
    /// starts the configuration's run process: with one warmup run, the default, the
    /// measured runs are alike.) A monitor whose reads cost a share of a short run that its
    /// counts could not repay (`interrupts`) sets this; the default samples every run. The
    /// decision holds for the later runs when the monitor is kept for them
    /// ([`Monitor::reusable`]); one built afresh for each run decides in each.
    fn min_run(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// Which series to keep when the run ends, given each metric and its change over the run
    /// (`changes[i]` -> result `[i]`). Monitors with many metrics keep the top movers.
    fn keep(&self, changes: &[(&str, f64)]) -> Vec<bool> {
        vec![true; changes.len()]
    }
}

/// Most files a [`Reader`] keeps open; more are opened for each read. The default monitors
/// keep about ten; a per-CPU monitor on a large machine could keep hundreds, against the
/// process's limit of descriptors (often 1024, getrlimit(2) RLIMIT_NOFILE).
pub const READER_FILES: usize = 64;

/// Reads the /proc and /sys files of one monitor into one buffer that keeps its capacity. A
/// file is opened at its first read and kept open: later reads are one pread(2) at offset 0
/// (and one more that finds its end) instead of open, fstat, lseek, read and close. A read at
/// offset 0 makes /proc's seq_file and sysfs produce the file's text afresh
/// (fs/seq_file.c `seq_read_iter` restarts when the offset is not where the last read
/// ended; fs/kernfs/file.c calls the attribute's `show` again), so every read sees the
/// values of that moment, as a fresh open does.
///
/// The buffer is zeroed once, when it is made or grows, not at every read: a read fills it
/// from its start and the text is its first `len` bytes.
#[derive(Debug, Default)]
pub struct Reader {
    files: std::collections::HashMap<std::path::PathBuf, std::fs::File>,
    bytes: Vec<u8>,
}

impl Reader {
    pub fn new(capacity: usize) -> Self {
        Reader {
            files: std::collections::HashMap::new(),
            bytes: vec![0; capacity.max(1)],
        }
    }

    /// The whole text of `path`, read as the type's documentation says.
    pub fn read(&mut self, path: &Path) -> Result<&str, MonitorError> {
        use std::os::unix::fs::FileExt;
        let opened;
        let file = match self.files.get(path) {
            Some(file) => file,
            None => {
                let file = std::fs::File::open(path).map_err(|e| MonitorError::from_io(path, e))?;
                if self.files.len() < READER_FILES {
                    self.files.entry(path.to_path_buf()).or_insert(file)
                } else {
                    opened = file;
                    &opened
                }
            }
        };
        let mut len = 0;
        loop {
            if len == self.bytes.len() {
                let grown = self.bytes.len().max(4096) * 2;
                self.bytes.resize(grown, 0);
            }
            match file.read_at(&mut self.bytes[len..], len as u64) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // A file that went away (a CPU taken offline) is opened afresh next time.
                    self.files.remove(path);
                    return Err(MonitorError::from_io(path, e));
                }
            }
        }
        std::str::from_utf8(&self.bytes[..len])
            .map_err(|e| MonitorError::parse(path, e.to_string()))
    }
}

/// Reads a whole file into `buf` (cleared first), so a monitor reuses one buffer per file.
pub fn read_into(path: &Path, buf: &mut String) -> Result<(), MonitorError> {
    buf.clear();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(buf))
        .map(|_| ())
        .map_err(|e| MonitorError::from_io(path, e))
}

/// Reads a whole file into a new string.
pub fn read_text(path: &Path) -> Result<String, MonitorError> {
    let mut buf = String::new();
    read_into(path, &mut buf)?;
    Ok(buf)
}

/// Selects the `top` metrics of each group (metrics sharing the prefix up to the first '.')
/// by absolute change, plus every metric for which `pinned` is true (totals).
pub fn top_movers<'a>(
    changes: &[(&'a str, f64)],
    top: usize,
    pinned: impl Fn(&str) -> bool,
) -> Vec<bool> {
    let group = |m: &'a str| m.split_once('.').map_or("", |(g, _)| g);
    let mut keep: Vec<bool> = changes.iter().map(|(m, _)| pinned(m)).collect();
    let mut order: Vec<usize> = (0..changes.len()).filter(|&i| !keep[i]).collect();
    // Largest change first; ties broken by name so the choice is deterministic.
    order.sort_by(|&a, &b| {
        changes[b]
            .1
            .abs()
            .total_cmp(&changes[a].1.abs())
            .then_with(|| changes[a].0.cmp(changes[b].0))
    });
    let mut taken: std::collections::BTreeMap<&str, usize> = Default::default();
    for i in order {
        let n = taken.entry(group(changes[i].0)).or_insert(0);
        if *n < top {
            *n += 1;
            keep[i] = true;
        }
    }
    keep
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_are_made_once_and_shared() {
        let mut names = MetricNames::default();
        let a = names.get("ctxt");
        let b = names.get("ctxt");
        assert!(Arc::ptr_eq(&a, &b));
        let c = names.format(format_args!("irq.{}", 7));
        let d = names.format(format_args!("irq.{}", 7));
        assert!(Arc::ptr_eq(&c, &d));
        assert_eq!(&*c, "irq.7");
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn metric_names_in_a_changed_order_are_still_the_shared_ones() {
        let mut names = MetricNames::default();
        let first: Vec<Metric> = ["a", "b", "c"].iter().map(|n| names.get(n)).collect();
        names.restart();
        // Same order: found by position.
        for (n, m) in ["a", "b", "c"].iter().zip(&first) {
            assert!(Arc::ptr_eq(&names.get(n), m));
        }
        names.restart();
        // Another order and a new name: each still its own, shared name.
        let again: Vec<Metric> = ["c", "new", "a", "b"]
            .iter()
            .map(|n| names.get(n))
            .collect();
        assert!(Arc::ptr_eq(&again[0], &first[2]));
        assert_eq!(&*again[1], "new");
        assert!(Arc::ptr_eq(&again[2], &first[0]));
        assert!(Arc::ptr_eq(&again[3], &first[1]));
        assert_eq!(names.len(), 4);
        // Without restarts, a sample that begins with the first name again starts over.
        let mut other = MetricNames::default();
        for _ in 0..100 {
            assert_eq!(&*other.get("x"), "x");
            assert_eq!(&*other.get("y"), "y");
        }
        assert_eq!(other.order.len(), 2);
        // Names that never repeat the first: the order stops growing at its limit.
        for i in 0..ORDER_LIMIT + 10 {
            let name = format!("m{i}");
            assert_eq!(*other.get(&name), *name);
        }
        assert_eq!(other.order.len(), ORDER_LIMIT);
    }

    #[test]
    fn top_movers_per_group_plus_pinned() {
        let changes = [
            ("irq.1", 5.0),
            ("irq.2", 50.0),
            ("irq.3", 0.0),
            ("softirq.A", 1.0),
            ("softirq.B", -9.0),
            ("irq_total", 55.0),
        ];
        let keep = top_movers(&changes, 1, |m| m.ends_with("_total"));
        assert_eq!(keep, vec![false, true, false, false, true, true]);
        let all = top_movers(&changes, 10, |_| false);
        assert!(all.iter().all(|&k| k));
    }

    #[test]
    fn a_reader_reads_a_kept_file_afresh_at_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let mut reader = Reader::new(2);
        assert_eq!(reader.read(&path).unwrap(), "one");
        // Rewritten in place, the same open file gives the new text, longer than the buffer.
        std::fs::write(&path, "two and more").unwrap();
        assert_eq!(reader.read(&path).unwrap(), "two and more");
        assert_eq!(reader.files.len(), 1);
        // /proc's seq_file gives its text again at offset 0.
        let stat = Path::new("/proc/self/stat");
        let first = reader.read(stat).unwrap().to_string();
        assert!(first.contains('('));
        assert!(reader.read(stat).unwrap().contains('('));
        let e = reader.read(&dir.path().join("absent")).unwrap_err();
        assert!(e.is_unsupported(), "{e}");
    }

    #[test]
    fn a_reader_keeps_at_most_its_limit_of_files_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = Reader::new(16);
        for i in 0..READER_FILES + 3 {
            let path = dir.path().join(i.to_string());
            std::fs::write(&path, i.to_string()).unwrap();
            assert_eq!(reader.read(&path).unwrap(), i.to_string());
        }
        assert_eq!(reader.files.len(), READER_FILES);
        let last = dir.path().join((READER_FILES + 2).to_string());
        assert_eq!(reader.read(&last).unwrap(), (READER_FILES + 2).to_string());
    }

    #[test]
    fn read_text_maps_missing_file_to_unsupported() {
        let e = read_text(Path::new("/proc/does-not-exist-here")).unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        assert!(read_text(Path::new("/proc/self/stat"))
            .unwrap()
            .contains('('));
    }
}
