//! cyclictest's output (rt-tests `src/cyclictest/cyclictest.c`), parsed: what the `cyclictest`
//! benchmark reads after each run and what `vernier import` reads from a user's file, so that
//! latency data measured with the tool the field trusts is kept, shown and compared next to
//! vernier's own. Two outputs are read (RESEARCH 1.3; docs/export-format.md):
//!
//! - the histogram block of `-h N` / `-H N` (on standard output or in `--histfile`): rows of
//!   per-thread counts of 1 us buckets, then `# Min Latencies:`, `# Avg Latencies:`,
//!   `# Max Latencies:` and `# Histogram Overflows:`. rt-tests 2.4 prints every row `0..N-1`
//!   and a `# Total:` line; since commit edba246 (2024) rows that are zero in every thread are
//!   left out, and since b02dde1 (2023) `# Total:` is gone. With `-H` rows carry a sum column
//!   and, with more than one thread, the max and overflow lines a column for all threads.
//!   Status lines (`T: 0 ( 1234) P:90 I:200 ...`) printed before the block give the priority
//!   and interval; they name no CPU.
//! - `--json=FILE`: per thread the non-empty buckets, `cycles`, `min`, `max`, `avg` and `cpu`
//!   (-1 when not pinned); the overflows are `cycles` minus the buckets' sum, since the JSON
//!   has no count of them. Two keys end in a colon (`"cmdline:"`, `"rt_test_version:"`).
//!
//! cyclictest records whole microseconds, truncated (`calcdiff()`): bucket `b` holds samples of
//! exactly `b` us, recorded here as `b * 1000` ns. Every thread becomes one latency histogram
//! ([`histograms`]), and the run's values are [`latency_values`] of them ([`run_values`]), the
//! same quantity and metrics as the `latency` benchmark's. Files that cyclictest could not
//! have written are refused with the line (text) or thread (JSON) and what is wrong.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use vernier_model::histogram::{latency_metrics, latency_values, LATENCY};
use vernier_model::{Environment, MetricInfo, OptionValue, Recording, RunHistogram};

mod session;

pub(crate) use session::times;
pub use session::{session, unreadable_times};

/// Why cyclictest's output could not be read: it is not something cyclictest could have
/// written, or vernier cannot use it.
#[derive(Debug, thiserror::Error)]
pub enum CyclictestError {
    /// The histogram output, at a line.
    #[error("line {line}: {problem}")]
    Line { line: usize, problem: String },
    #[error("not a valid cyclictest --json file")]
    Json(#[source] serde_json::Error),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot read the file")]
    Io(#[source] std::io::Error),
}

/// Which of cyclictest's outputs a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The histogram block of `-h`/`-H`, with or without status lines around it.
    Histogram,
    /// `--json=FILE`.
    Json,
}

/// The lines that only cyclictest's output has: how a text file is recognised. Besides the
/// histogram block's, a status line (`T: 0 ( 9290) P:90 ...`), so that output without `-h`
/// is told what it lacks.
pub fn is_marker(line: &str) -> bool {
    let line = strip_escapes(line).trim_end();
    line == "# Histogram" || line.starts_with("# Min Latencies:") || status_line(line).is_some()
}

/// One measurement thread as the file describes it, in the file's unit (us, or ns with `-N`).
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub index: u32,
    /// The CPU the thread was pinned to, when the file says (JSON only).
    pub cpu: Option<u32>,
    /// Non-empty buckets, ascending: (bucket, samples); bucket `b` holds samples of `b` units.
    pub buckets: Vec<(u64, u64)>,
    /// Samples at or beyond the histogram's size.
    pub overflows: u64,
    pub min: u64,
    pub max: u64,
    /// The cycle (sample index, from 0) of the maximum, when the file tells it: the one overflow
    /// of the histogram output's overflow list.
    pub max_index: Option<u64>,
    /// The mean as the file gives it: JSON to two decimals, text truncated to an integer.
    pub avg: Option<f64>,
}

impl Thread {
    /// Samples in buckets.
    pub fn in_buckets(&self) -> u64 {
        self.buckets.iter().map(|b| b.1).sum()
    }

    /// Samples taken, overflows included.
    pub fn count(&self) -> u64 {
        self.in_buckets() + self.overflows
    }
}

/// A cyclictest result as read, before it becomes a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Cyclictest {
    pub output: Output,
    /// rt-tests version (`rt_test_version:`), JSON only.
    pub version: Option<String>,
    /// The command line (`cmdline:`), JSON only.
    pub cmdline: Option<String>,
    /// Nanoseconds per unit of the file: 1000, or 1 for a JSON file of `-N` (`resolution_in_ns`).
    pub unit_ns: u64,
    /// `N` of `-h N` when known: from the command line, or the row count of the 2.4 form.
    pub size: Option<u64>,
    pub threads: Vec<Thread>,
    /// Options of the configuration, from the command line or the status lines.
    pub options: BTreeMap<String, OptionValue>,
    /// Start and end as the file writes them (`Mon, 23 Nov 2026 17:36:22 +0000`; JSON only).
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    /// The interval in us, when the status lines or the command line give it.
    pub interval_us: Option<u64>,
    pub environment: Environment,
    pub return_code: Option<i64>,
    /// SHA-256 of the file, from which the ids derive.
    pub digest: [u8; 32],
}

fn line_error(line: usize, problem: impl Into<String>) -> CyclictestError {
    CyclictestError::Line {
        line,
        problem: problem.into(),
    }
}

/// The largest number read from a cyclictest file, 2^50: a count of samples (35 years of
/// wake-ups every microsecond), a latency or a bucket in microseconds (35 years). With at
/// most [`MAX_THREADS`] threads, no sum of a file's numbers can overflow 2^64 (a count near
/// 2^64 made the import panic).
pub const MAX_NUMBER: u64 = 1 << 50;

/// The most threads of a cyclictest file: 8192, the largest CONFIG_NR_CPUS of Linux, one
/// thread per CPU.
pub const MAX_THREADS: usize = 8192;

/// Refuses a number beyond [`MAX_NUMBER`], naming it.
fn bounded(n: u64, what: impl FnOnce() -> String) -> Result<u64, String> {
    if n > MAX_NUMBER {
        return Err(format!(
            "{} is {n}, more than {MAX_NUMBER} (2^50), the most vernier reads",
            what()
        ));
    }
    Ok(n)
}

/// Refuses a file of more threads than [`MAX_THREADS`].
fn check_threads(n: usize) -> Result<(), String> {
    if n > MAX_THREADS {
        return Err(format!(
            "the file has {n} threads, more than {MAX_THREADS} (one per CPU of the largest \
             Linux machine)"
        ));
    }
    Ok(())
}

/// The samples of a thread's buckets, refused beyond [`MAX_NUMBER`] in all.
fn bucket_total(buckets: &[(u64, u64)], thread: &str) -> Result<u64, String> {
    buckets
        .iter()
        .try_fold(0u64, |total, &(_, n)| {
            total.checked_add(n).filter(|&t| t <= MAX_NUMBER)
        })
        .ok_or_else(|| {
            format!("thread {thread}: its histogram holds more than {MAX_NUMBER} (2^50) samples")
        })
}

/// An unsigned decimal number as cyclictest prints them (`%06lu`, `%05lu`, `%09llu`), at most
/// [`MAX_NUMBER`].
fn number(token: &str, what: impl FnOnce() -> String) -> Result<u64, String> {
    let digits = token.strip_prefix('-').unwrap_or(token);
    let numeric = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    if numeric && token.starts_with('-') {
        return Err(format!(
            "{} is {token}, a negative number (cyclictest prints unsigned ones)",
            what()
        ));
    }
    if !numeric {
        return Err(format!("{} '{token}' is not a number", what()));
    }
    match token.parse() {
        Ok(n) if n <= MAX_NUMBER => Ok(n),
        _ => Err(format!(
            "{} '{token}' is too large: more than {MAX_NUMBER} (2^50), the most vernier reads",
            what()
        )),
    }
}

/// A summary line's values (`# Max Latencies: 00012 00034`).
fn values(rest: &str, line: usize, label: &str) -> Result<(usize, Vec<u64>), CyclictestError> {
    let values = rest
        .split_whitespace()
        .enumerate()
        .map(|(i, t)| number(t, || format!("'{label}' value {}", i + 1)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|p| line_error(line, p))?;
    if values.is_empty() {
        return Err(line_error(line, format!("'{label}' has no values")));
    }
    Ok((line, values))
}

/// Removes terminal control sequences (`ESC [ 4 A`, which cyclictest prints to redraw its
/// status lines) from the start of a line.
fn strip_escapes(mut line: &str) -> &str {
    while let Some(rest) = line.strip_prefix('\u{1b}') {
        let rest = rest.strip_prefix('[').unwrap_or(rest);
        let end = rest
            .find(|c: char| c.is_ascii_alphabetic())
            .map_or(rest.len(), |i| i + 1);
        line = &rest[end..];
    }
    line
}

/// The priority and interval of a status line `T: 0 ( 9290) P:90 I:200 C: 9908 Min: ...`
/// (`print_stat()`), with its thread.
fn status_line(line: &str) -> Option<(u32, u64, u64)> {
    let rest = line.strip_prefix("T:")?;
    let mut tokens = rest.split_whitespace();
    let thread = tokens.next()?.parse().ok()?;
    let (mut priority, mut interval) = (None, None);
    for t in tokens {
        if let Some(p) = t.strip_prefix("P:") {
            priority = p.parse().ok();
        } else if let Some(i) = t.strip_prefix("I:") {
            interval = i.parse().ok();
        }
    }
    Some((thread, priority?, interval?))
}

/// A summary line's line number and values.
type Summary = Option<(usize, Vec<u64>)>;

/// What a text file has told so far.
#[derive(Default)]
struct TextState {
    line: usize,
    histogram_line: Option<usize>,
    /// Counts per row, and the line and bucket of every row with a non-zero count.
    width: Option<(usize, usize)>,
    row_lines: Vec<usize>,
    row_buckets: Vec<u64>,
    row_counts: Vec<u64>,
    rows: u64,
    last_bucket: Option<u64>,
    /// Every row so far was the one after the previous, from 0 (the 2.4 form).
    consecutive: bool,
    total: Summary,
    min: Summary,
    avg: Summary,
    max: Summary,
    overflows: Summary,
    status: BTreeMap<u32, (u64, u64)>,
    /// After `# Histogram Overflow at cycle number:`.
    in_overflow_list: bool,
    /// Per thread, the cycle of its overflow when the list holds exactly one.
    single_overflow: BTreeMap<u32, u64>,
}

impl TextState {
    fn summary_seen(&self) -> bool {
        self.total.is_some() || self.min.is_some() || self.max.is_some()
    }

    fn row(&mut self, text: &str) -> Result<(), CyclictestError> {
        let line = self.line;
        if self.summary_seen() {
            return Err(line_error(
                line,
                "a histogram row after the summary lines of the block",
            ));
        }
        let mut tokens = text.split_whitespace();
        let first = tokens.next().unwrap_or_default();
        let bucket = number(first, || "the bucket".into()).map_err(|p| line_error(line, p))?;
        let start = self.row_counts.len();
        let mut sum = 0u64;
        let mut n = 0;
        for (i, t) in tokens.enumerate() {
            let count = number(t, || format!("the count of column {}", i + 1))
                .map_err(|p| line_error(line, p))?;
            sum = sum.saturating_add(count);
            self.row_counts.push(count);
            n += 1;
        }
        if n == 0 {
            return Err(line_error(
                line,
                format!("histogram row {bucket} has no counts: the row is truncated"),
            ));
        }
        match self.width {
            None => self.width = Some((n, line)),
            Some((w, first_line)) if w != n => {
                return Err(line_error(
                    line,
                    format!(
                        "histogram row {bucket} has {n} count(s), the rows before it {w} (from \
                         line {first_line}): the row is truncated or its thread columns disagree"
                    ),
                ))
            }
            Some(_) => {}
        }
        if let Some(last) = self.last_bucket {
            if bucket <= last {
                return Err(line_error(
                    line,
                    format!("histogram row {bucket} follows row {last}: rows ascend"),
                ));
            }
        }
        self.consecutive = match self.last_bucket {
            None => bucket == 0,
            Some(last) => self.consecutive && bucket == last + 1,
        };
        self.last_bucket = Some(bucket);
        self.rows += 1;
        if sum == 0 {
            self.row_counts.truncate(start);
        } else {
            self.row_lines.push(line);
            self.row_buckets.push(bucket);
        }
        Ok(())
    }

    fn once(
        slot: &mut Summary,
        value: (usize, Vec<u64>),
        label: &str,
    ) -> Result<(), CyclictestError> {
        if let Some((first, _)) = slot {
            return Err(line_error(
                value.0,
                format!("a second '{label}' line (the first is line {first}): one result per file"),
            ));
        }
        *slot = Some(value);
        Ok(())
    }

    fn line(&mut self, raw: &str) -> Result<(), CyclictestError> {
        let text = strip_escapes(raw.trim_end_matches(['\n', '\r']));
        let trimmed = text.trim();
        let line = self.line;
        if let Some((thread, priority, interval)) = status_line(trimmed) {
            self.status.insert(thread, (priority, interval));
            return Ok(());
        }
        if trimmed == "# Histogram" {
            if let Some(first) = self.histogram_line {
                return Err(line_error(
                    line,
                    format!("a second '# Histogram' block (the first is at line {first}): one result per file"),
                ));
            }
            self.histogram_line = Some(line);
            self.consecutive = true;
            return Ok(());
        }
        let in_block = self.histogram_line.is_some();
        const SUMMARY: [&str; 5] = [
            "# Total:",
            "# Min Latencies:",
            "# Avg Latencies:",
            "# Max Latencies:",
            "# Histogram Overflows:",
        ];
        for label in SUMMARY {
            if let Some(rest) = trimmed.strip_prefix(label) {
                let name = label.trim_end_matches(':');
                if !in_block {
                    return Err(line_error(
                        line,
                        format!("'{name}' before the '# Histogram' line that starts the block"),
                    ));
                }
                let value = values(rest, line, name)?;
                let slot = match label {
                    "# Total:" => &mut self.total,
                    "# Min Latencies:" => &mut self.min,
                    "# Avg Latencies:" => &mut self.avg,
                    "# Max Latencies:" => &mut self.max,
                    _ => &mut self.overflows,
                };
                return Self::once(slot, value, name);
            }
        }
        if in_block && trimmed.starts_with(|c: char| c.is_ascii_digit()) {
            return self.row(trimmed);
        }
        if trimmed == "# Histogram Overflow at cycle number:" {
            self.in_overflow_list = in_block;
            return Ok(());
        }
        // `# Thread 0: 00126 00813 ... # 00042 others`: the cycle of each overflow.
        if let Some((thread, cycles)) = trimmed
            .strip_prefix("# Thread ")
            .and_then(|t| t.split_once(':'))
            .filter(|_| self.in_overflow_list)
        {
            if let (Ok(thread), [cycle]) = (
                thread.parse::<u32>(),
                cycles.split_whitespace().collect::<Vec<_>>().as_slice(),
            ) {
                if let Ok(cycle) = cycle.parse() {
                    self.single_overflow.insert(thread, cycle);
                }
            }
            return Ok(());
        }
        // Anything else (`# /dev/cpu_dma_latency set to 0us`, `policy: fifo: loadavg: ...`,
        // `# Thread Ids:`, `# Break thread:`, `# SMIs:`, warnings) says nothing vernier keeps.
        Ok(())
    }

    /// The threads, once the whole file is read; every count checked against the others.
    fn finish(self, digest: [u8; 32]) -> Result<Cyclictest, CyclictestError> {
        let last = self.line;
        let Some(histogram_line) = self.histogram_line else {
            return Err(line_error(
                last,
                "no '# Histogram' line: cyclictest writes its histogram only with -h or -H",
            ));
        };
        let truncated = |label: &str| {
            line_error(
                last,
                format!(
                    "the histogram block of line {histogram_line} has no '{label}' line: the \
                     file is truncated"
                ),
            )
        };
        let (min_line, min) = self.min.ok_or_else(|| truncated("# Min Latencies:"))?;
        let (max_line, max) = self.max.ok_or_else(|| truncated("# Max Latencies:"))?;
        let (overflow_line, overflows) = self
            .overflows
            .ok_or_else(|| truncated("# Histogram Overflows:"))?;
        let threads = min.len();
        check_threads(threads).map_err(|p| line_error(min_line, p))?;
        let columns = |line: usize, label: &str, n: usize, extra: bool| {
            let ok = n == threads || (extra && n == threads + 1);
            if ok {
                Ok(())
            } else {
                Err(line_error(
                    line,
                    format!(
                        "'{label}' has {n} values, but '# Min Latencies:' (line {min_line}) has \
                         {threads}, one per thread: the thread columns disagree"
                    ),
                ))
            }
        };
        // The mean has no -H column: it tells the thread count when the others disagree.
        let avg = match &self.avg {
            Some((line, avg)) => {
                columns(*line, "# Avg Latencies", avg.len(), false)?;
                Some(avg.clone())
            }
            None => None,
        };
        columns(max_line, "# Max Latencies", max.len(), true)?;
        columns(
            overflow_line,
            "# Histogram Overflows",
            overflows.len(),
            true,
        )?;
        if max.len() > threads && max[threads] != max[..threads].iter().copied().max().unwrap_or(0)
        {
            return Err(line_error(
                max_line,
                format!(
                    "the last '# Max Latencies' value {} (-H: all threads) is not the largest of \
                     the others",
                    max[threads]
                ),
            ));
        }
        let all_overflows: u64 = overflows[..threads].iter().sum();
        if overflows.len() > threads && overflows[threads] != all_overflows {
            return Err(line_error(
                overflow_line,
                format!(
                    "the last '# Histogram Overflows' value {} (-H: all threads) is not the \
                     sum {all_overflows} of the others",
                    overflows[threads]
                ),
            ));
        }
        // The rows: one column per thread, and with -H one more with their sum.
        let width = self.width.map_or(threads, |w| w.0);
        if let Some((w, line)) = self.width {
            if w != threads && w != threads + 1 {
                return Err(line_error(
                    line,
                    format!(
                        "histogram rows have {w} counts, but '# Min Latencies:' (line \
                         {min_line}) has {threads} values, one per thread: the thread columns \
                         disagree"
                    ),
                ));
            }
        }
        let mut buckets = vec![Vec::new(); threads];
        let mut column_sums = vec![0u64; width];
        for (r, (&line, &bucket)) in self.row_lines.iter().zip(&self.row_buckets).enumerate() {
            let counts = &self.row_counts[r * width..(r + 1) * width];
            for (j, &n) in counts.iter().enumerate() {
                column_sums[j] = column_sums[j].saturating_add(n);
                if j < threads && n > 0 {
                    buckets[j].push((bucket, n));
                }
            }
            if width > threads {
                let sum: u64 = counts[..threads].iter().sum();
                if counts[threads] != sum {
                    return Err(line_error(
                        line,
                        format!(
                            "the last count {} of row {bucket} (-H: all threads) is not the sum \
                             {sum} of the others",
                            counts[threads]
                        ),
                    ));
                }
            }
        }
        if let Some((line, total)) = &self.total {
            columns(*line, "# Total", total.len(), true)?;
            let all = column_sums[..threads]
                .iter()
                .fold(0u64, |all, &n| all.saturating_add(n));
            for (j, &t) in total.iter().enumerate() {
                let rows = if j < threads { column_sums[j] } else { all };
                if t != rows {
                    let whose = if j < threads {
                        format!("thread {j}")
                    } else {
                        "all threads (-H)".to_string()
                    };
                    return Err(line_error(
                        *line,
                        format!(
                            "'# Total:' gives {t} samples for {whose}, but its rows hold {rows}"
                        ),
                    ));
                }
            }
        }
        // The 2.4 form prints every row from 0 to N - 1.
        let size = (self.total.is_some() && self.consecutive && self.rows > 0).then_some(self.rows);
        let mut result = Vec::with_capacity(threads);
        for (j, buckets) in buckets.into_iter().enumerate() {
            bucket_total(&buckets, &j.to_string()).map_err(|p| line_error(histogram_line, p))?;
            let thread = Thread {
                index: j as u32,
                cpu: None,
                buckets,
                overflows: overflows[j],
                min: min[j],
                max: max[j],
                // One overflow is the maximum (it exceeds every bucket).
                max_index: (overflows[j] == 1)
                    .then(|| self.single_overflow.get(&(j as u32)).copied())
                    .flatten(),
                avg: avg.as_ref().map(|a| a[j] as f64),
            };
            consistent(&thread, size, &j.to_string()).map_err(|(fact, p)| {
                let line = match fact {
                    Fact::Min => min_line,
                    Fact::Max => max_line,
                };
                line_error(line, p)
            })?;
            result.push(thread);
        }
        let mut options = BTreeMap::new();
        let status: Vec<(u64, u64)> = (0..threads as u32)
            .filter_map(|t| self.status.get(&t).copied())
            .collect();
        let same = |values: Vec<u64>| -> Option<OptionValue> {
            let first = *values.first()?;
            if values.iter().all(|&v| v == first) {
                Some(OptionValue::UInt(first))
            } else {
                Some(OptionValue::Text(
                    values
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                ))
            }
        };
        let mut interval_us = None;
        if status.len() == threads {
            if let Some(p) = same(status.iter().map(|s| s.0).collect()) {
                options.insert("priority".to_string(), p);
            }
            if let Some(i) = same(status.iter().map(|s| s.1).collect()) {
                if let OptionValue::UInt(i) = i {
                    interval_us = Some(i);
                }
                options.insert("interval".to_string(), i);
            }
        }
        options.insert("threads".to_string(), OptionValue::UInt(threads as u64));
        if let Some(n) = size {
            options.insert("histogram".to_string(), OptionValue::UInt(n));
        }
        Ok(Cyclictest {
            output: Output::Histogram,
            version: None,
            cmdline: None,
            unit_ns: 1_000,
            size,
            threads: result,
            options,
            start_time: None,
            end_time: None,
            interval_us,
            environment: Environment::default(),
            return_code: None,
            digest,
        })
    }
}

/// Which summary fact contradicts the buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fact {
    Min,
    Max,
}

/// Checks a thread's minimum and maximum against its buckets and overflows: cyclictest updates
/// all of them for every sample, so they agree in any file it wrote. `i` names the thread.
fn consistent(t: &Thread, size: Option<u64>, i: &str) -> Result<(), (Fact, String)> {
    if t.count() == 0 {
        return Ok(());
    }
    if let (Some(&(low, _)), Some(&(high, _))) = (t.buckets.first(), t.buckets.last()) {
        if t.min != low {
            return Err((
                Fact::Min,
                format!(
                    "thread {i}: the minimum {} is not its lowest non-empty bucket {low}",
                    t.min
                ),
            ));
        }
        if t.overflows == 0 && t.max != high {
            return Err((
                Fact::Max,
                format!(
                    "thread {i}: the maximum {} is not its highest non-empty bucket {high}, \
                         and it has no overflows",
                    t.max
                ),
            ));
        }
        if t.overflows > 0 && t.max <= high {
            return Err((
                Fact::Max,
                format!(
                    "thread {i}: {} overflows, but the maximum {} is within its buckets (up \
                         to {high})",
                    t.overflows, t.max
                ),
            ));
        }
    }
    if let Some(n) = size {
        if t.overflows > 0 && t.max < n {
            return Err((
                Fact::Max,
                format!(
                    "thread {i}: {} overflows, but the maximum {} is below the histogram's size \
                     {n}",
                    t.overflows, t.max
                ),
            ));
        }
    }
    Ok(())
}

/// The longest line of cyclictest's histogram output read, in bytes (1 MiB): a row of
/// [`MAX_THREADS`] counts of 7 characters is 57 KiB. A longer one (`/dev/zero`, a binary file)
/// is refused instead of read until memory runs out.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The largest `--json` file read, in bytes (256 MiB): every bucket of `-h 1000000` for 64
/// threads.
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// Reads the next line of `input` into `line` (cleared first), with its `\n`: its length, 0
/// at the end, or `None` when it is longer than [`MAX_LINE_BYTES`] (then `line` holds its
/// first [`MAX_LINE_BYTES`] + 1 bytes).
pub fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    line.clear();
    let n = input
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', line)?;
    Ok((n <= MAX_LINE_BYTES || line.ends_with(b"\n")).then_some(n))
}

/// Reads cyclictest's histogram output from `input`, line by line: memory holds the non-empty
/// rows, never the status lines that a long run without `-q` prints before them.
pub fn read_histogram_text(input: impl Read) -> Result<Cyclictest, CyclictestError> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut hasher = Sha256::new();
    let mut state = TextState::default();
    let mut buf = Vec::new();
    loop {
        let Some(n) = read_line(&mut reader, &mut buf).map_err(CyclictestError::Io)? else {
            return Err(line_error(
                state.line + 1,
                format!(
                    "the line is longer than {MAX_LINE_BYTES} bytes (1 MiB), which no \
                         line of cyclictest's is"
                ),
            ));
        };
        if n == 0 {
            break;
        }
        hasher.update(&buf);
        state.line += 1;
        state.line(&String::from_utf8_lossy(&buf))?;
    }
    state.finish(hasher.finalize().into())
}

/// `--json=FILE` (`write_stats()` and `rt_write_json()` of rt-tests); fields vernier does not
/// use (`node`, `file_version`) are ignored.
#[derive(Debug, Deserialize)]
struct JsonDocument {
    #[serde(rename = "cmdline:", alias = "cmdline")]
    cmdline: Option<String>,
    #[serde(rename = "rt_test_version:", alias = "rt_test_version")]
    version: Option<String>,
    start_time: Option<String>,
    end_time: Option<String>,
    return_code: Option<i64>,
    sysinfo: Option<JsonSysinfo>,
    num_threads: Option<u64>,
    resolution_in_ns: Option<u64>,
    thread: BTreeMap<String, JsonThread>,
}

#[derive(Debug, Deserialize)]
struct JsonSysinfo {
    nodename: Option<String>,
    release: Option<String>,
    version: Option<String>,
    machine: Option<String>,
    /// 1 when /sys/kernel/realtime says 1 (a PREEMPT_RT kernel).
    realtime: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct JsonThread {
    /// Only the non-empty buckets; absent (newer) or empty (2.4) without `-h`.
    histogram: Option<BTreeMap<String, u64>>,
    cycles: u64,
    min: u64,
    max: u64,
    avg: Option<f64>,
    /// -1 when the thread was not pinned.
    cpu: Option<i64>,
}

/// Reads cyclictest's `--json` output (`bytes`, whole).
pub fn read_json(bytes: &[u8]) -> Result<Cyclictest, CyclictestError> {
    let doc: JsonDocument = serde_json::from_slice(bytes).map_err(CyclictestError::Json)?;
    let digest: [u8; 32] = Sha256::digest(bytes).into();
    let cyclictest_error = |p: String| CyclictestError::Invalid(p);
    let options = doc
        .cmdline
        .as_deref()
        .map(command_line_options)
        .unwrap_or_default();
    let size = match options.get("histogram") {
        Some(OptionValue::UInt(n)) => Some(*n),
        _ => None,
    };
    check_threads(doc.thread.len()).map_err(cyclictest_error)?;
    let mut threads = Vec::with_capacity(doc.thread.len());
    for (key, t) in &doc.thread {
        let index: u32 = key.parse().map_err(|_| {
            cyclictest_error(format!(
                "thread key \"{key}\" is not a thread number (cyclictest writes \"0\", \"1\", ...)"
            ))
        })?;
        let place = format!("thread \"{key}\"");
        let Some(histogram) = &t.histogram else {
            return Err(cyclictest_error(format!(
                "{place} has no histogram: cyclictest ran without -h/--histogram, and vernier \
                 needs the histogram for percentiles"
            )));
        };
        if histogram.is_empty() && t.cycles > 0 && size.is_none() && doc.cmdline.is_some() {
            return Err(cyclictest_error(format!(
                "{place} has an empty histogram and the command line no -h: cyclictest ran \
                 without -h/--histogram, and vernier needs the histogram for percentiles"
            )));
        }
        for (what, n) in [("cycles", t.cycles), ("min", t.min), ("max", t.max)] {
            bounded(n, || format!("{place}: \"{what}\"")).map_err(cyclictest_error)?;
        }
        let mut buckets = Vec::with_capacity(histogram.len());
        for (bucket, &n) in histogram {
            let b: u64 = bucket.parse().map_err(|_| {
                cyclictest_error(format!(
                    "{place}: histogram key \"{bucket}\" is not a bucket number"
                ))
            })?;
            bounded(b, || format!("{place}: histogram key \"{bucket}\""))
                .and_then(|_| bounded(n, || format!("{place}: the count of bucket {bucket}")))
                .map_err(cyclictest_error)?;
            if n > 0 {
                buckets.push((b, n));
            }
        }
        buckets.sort_unstable();
        let in_buckets = bucket_total(&buckets, &format!("\"{key}\"")).map_err(cyclictest_error)?;
        if in_buckets > t.cycles {
            return Err(cyclictest_error(format!(
                "{place}: the histogram holds {in_buckets} samples, more than its {} cycles",
                t.cycles
            )));
        }
        let thread = Thread {
            index,
            cpu: t.cpu.and_then(|c| u32::try_from(c).ok()),
            buckets,
            overflows: t.cycles - in_buckets,
            min: t.min,
            max: t.max,
            max_index: None,
            avg: t.avg.filter(|a| a.is_finite()),
        };
        consistent(&thread, size, &format!("\"{key}\"")).map_err(|(_, p)| cyclictest_error(p))?;
        threads.push(thread);
    }
    threads.sort_by_key(|t| t.index);
    if threads.is_empty() {
        return Err(cyclictest_error("the file has no threads".into()));
    }
    if let Some(n) = doc.num_threads {
        if n != threads.len() as u64 {
            return Err(cyclictest_error(format!(
                "\"num_threads\" is {n}, but \"thread\" holds {}",
                threads.len()
            )));
        }
    }
    let mut environment = Environment::default();
    if let Some(s) = &doc.sysinfo {
        environment.kernel_release = s.release.clone();
        environment.kernel_version = s.version.clone();
        environment.arch = s.machine.clone();
        environment.hostname = s.nodename.clone();
        if s.realtime == Some(1) {
            environment.preemption = Some("rt".to_string());
        }
    }
    if let Some(v) = &doc.version {
        environment
            .tool_versions
            .insert("cyclictest".to_string(), v.clone());
    }
    let interval_us = match options.get("interval") {
        Some(OptionValue::UInt(i)) => Some(*i),
        _ => None,
    };
    let mut options = options;
    options.insert(
        "threads".to_string(),
        OptionValue::UInt(threads.len() as u64),
    );
    Ok(Cyclictest {
        output: Output::Json,
        version: doc.version,
        cmdline: doc.cmdline,
        unit_ns: if doc.resolution_in_ns == Some(1) {
            1
        } else {
            1_000
        },
        size,
        threads,
        options,
        start_time: doc.start_time,
        end_time: doc.end_time,
        interval_us,
        environment,
        return_code: doc.return_code,
        digest,
    })
}

/// The options of a cyclictest command line that describe the measurement (rt-tests
/// `process_options()`: getopt_long with `a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvx`), by
/// their long names. Output options (`-q`, `--json`, `--histfile`) are left out.
pub fn command_line_options(cmdline: &str) -> BTreeMap<String, OptionValue> {
    const SHORT_WITH_VALUE: &str = "bcdDFhHilop";
    const LONG_WITH_VALUE: &[&str] = &[
        "breaktrace",
        "clock",
        "deepest-idle-state",
        "distance",
        "duration",
        "histfile",
        "histofall",
        "histogram",
        "interval",
        "json",
        "latency",
        "loops",
        "mainaffinity",
        "policy",
        "priority",
        "spike",
        "spike-nodes",
    ];
    let stored = |name: &str| -> Option<&'static str> {
        Some(match name {
            "i" | "interval" => "interval",
            "p" | "priority" => "priority",
            "h" | "H" | "histogram" | "histofall" => "histogram",
            "t" | "threads" => "threads",
            "a" | "affinity" => "affinity",
            "D" | "duration" => "duration",
            "l" | "loops" => "loops",
            "d" | "distance" => "distance",
            "policy" => "policy",
            "m" | "mlockall" => "mlockall",
            "S" | "smp" => "smp",
            "N" | "nsecs" => "nsecs",
            "latency" => "latency",
            "default-system" => "default_system",
            _ => return None,
        })
    };
    let mut options = BTreeMap::new();
    let mut put = |name: &str, value: Option<&str>| {
        let Some(key) = stored(name) else { return };
        let value = match value {
            Some(v) => match v.parse::<u64>() {
                Ok(n) if key != "duration" && key != "affinity" => OptionValue::UInt(n),
                _ => OptionValue::Text(v.to_string()),
            },
            None if key == "affinity" || key == "threads" => OptionValue::Text("all".into()),
            None => OptionValue::Text("yes".into()),
        };
        options.insert(key.to_string(), value);
    };
    let tokens: Vec<&str> = cmdline.split_whitespace().skip(1).collect();
    // An optional value (`-t`, `-a`) may be the next word when it is a number, as
    // cyclictest's own parsing takes it.
    let optional_next = |i: usize| {
        tokens
            .get(i + 1)
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
            .copied()
    };
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        if let Some(long) = token.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => put(name, Some(value)),
                None if LONG_WITH_VALUE.contains(&long) => {
                    put(long, tokens.get(i + 1).copied());
                    i += 1;
                }
                None if long == "threads" || long == "affinity" => {
                    let next = optional_next(i);
                    put(long, next);
                    i += usize::from(next.is_some());
                }
                None => put(long, None),
            }
        } else if let Some(short) = token.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (k, c) in short.char_indices() {
                let name = &short[k..k + c.len_utf8()];
                let rest = &short[k + c.len_utf8()..];
                if SHORT_WITH_VALUE.contains(c) {
                    if rest.is_empty() {
                        put(name, tokens.get(i + 1).copied());
                        i += 1;
                    } else {
                        put(name, Some(rest));
                    }
                    break;
                }
                if c == 't' || c == 'a' || c == 'A' {
                    if rest.is_empty() {
                        let next = optional_next(i);
                        put(name, next);
                        i += usize::from(next.is_some());
                    } else {
                        put(name, Some(rest));
                    }
                    break;
                }
                put(name, None);
            }
        }
        i += 1;
    }
    options
}

/// Reads a cyclictest file of either output.
pub fn read(output: Output, input: impl Read) -> Result<Cyclictest, CyclictestError> {
    match output {
        Output::Histogram => read_histogram_text(input),
        Output::Json => {
            let mut bytes = Vec::new();
            input
                .take(MAX_JSON_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(CyclictestError::Io)?;
            if bytes.len() as u64 > MAX_JSON_BYTES {
                return Err(CyclictestError::Invalid(format!(
                    "the file holds more than {MAX_JSON_BYTES} bytes (256 MiB), the most \
                     vernier reads of cyclictest's --json output"
                )));
            }
            read_json(&bytes)
        }
    }
}

/// The samples' sum in units: exact when at most one sample overflowed (that one is the
/// maximum); otherwise the overflows' part is estimated from the file's mean (to 0.01 in
/// JSON, truncated in text, so its midpoint), kept within what the maximum and the histogram's
/// size allow.
fn sum_units(t: &Thread, size: Option<u64>, truncated_avg: bool) -> u64 {
    let in_buckets: u128 = t.buckets.iter().map(|&(b, n)| b as u128 * n as u128).sum();
    let rest = match t.overflows {
        0 => 0,
        1 => t.max as u128,
        k => {
            let k = k as u128;
            let floor = size
                .or_else(|| t.buckets.last().map(|b| b.0 + 1))
                .unwrap_or(0)
                .min(t.max) as u128;
            let low = t.max as u128 + (k - 1) * floor;
            let high = k * t.max as u128;
            match t.avg {
                Some(avg) => {
                    let mean = if truncated_avg { avg + 0.5 } else { avg };
                    let total = mean * t.count() as f64;
                    let estimate = (total - in_buckets as f64).max(0.0) as u128;
                    estimate.clamp(low, high)
                }
                None => low,
            }
        }
    };
    u64::try_from(in_buckets + rest).unwrap_or(u64::MAX)
}

/// A thread's histogram in nanoseconds.
pub fn histogram(c: &Cyclictest, t: &Thread) -> RunHistogram {
    let mut r = Recording::new();
    for &(b, n) in &t.buckets {
        r.record_n(b.saturating_mul(c.unit_ns), n);
    }
    r.record_overflows(t.overflows);
    let mut h = r.finish(LATENCY, t.index, t.cpu);
    if h.count > 0 {
        h.min_ns = t.min.saturating_mul(c.unit_ns);
        h.max_ns = t.max.saturating_mul(c.unit_ns);
    }
    // The order of the samples is not in the file, but for a lone overflow's.
    h.max_index = t.max_index;
    h.sum_ns = sum_units(t, c.size, c.output == Output::Histogram).saturating_mul(c.unit_ns);
    h
}

/// The metrics of a cyclictest run: the `latency` benchmark's, without `missed`, since
/// cyclictest skips late periods without counting them (RESEARCH 1.1).
pub fn metrics() -> (MetricInfo, Vec<MetricInfo>) {
    let (metric, mut secondary) = latency_metrics();
    secondary.retain(|m| m.name != "missed");
    (metric, secondary)
}

/// The histograms of every thread and the values of the run (those of [`metrics`]), as the
/// `latency` benchmark computes them. An error when the p99 lies among the overflows, naming
/// the larger `-h` that would hold it.
pub fn run_values(
    c: &Cyclictest,
) -> Result<(BTreeMap<String, f64>, Vec<RunHistogram>), CyclictestError> {
    let histograms: Vec<RunHistogram> = c.threads.iter().map(|t| histogram(c, t)).collect();
    let mut values = latency_values(&histograms).map_err(|e| {
        let overflows: u64 = c.threads.iter().map(|t| t.overflows).sum();
        if overflows == 0 {
            return CyclictestError::Invalid(e);
        }
        let larger = match c.size {
            Some(n) => format!("a larger -h than {n}"),
            None => "a larger -h".to_string(),
        };
        let max = c.threads.iter().map(|t| t.max).max().unwrap_or(0);
        CyclictestError::Invalid(format!(
            "{e}: run cyclictest with {larger} (the largest latency was {max} us)"
        ))
    })?;
    // Unknown, not 0: cyclictest does not count the periods it skips.
    values.remove("missed");
    Ok((values, histograms))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_model::Options;

    /// Real outputs of cyclictest V 2.40 (rt-tests 2.4, Debian bookworm) on a 2-CPU virtual
    /// machine, and the newer sparse form of the same runs written by hand (RESEARCH 1.3).
    pub(crate) fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/cyclictest/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap()
    }

    fn text(name: &str) -> Cyclictest {
        read_histogram_text(&fixture(name)[..]).unwrap()
    }

    /// (samples in buckets, overflows, min, max) per thread.
    fn facts(c: &Cyclictest) -> Vec<(u64, u64, u64, u64)> {
        c.threads
            .iter()
            .map(|t| (t.in_buckets(), t.overflows, t.min, t.max))
            .collect()
    }

    fn text_error(input: &str) -> String {
        read_histogram_text(input.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn the_2_4_form_gives_every_row_and_a_total() {
        let c = text("2.4-h400-q.txt");
        assert_eq!(c.size, Some(400));
        assert_eq!(facts(&c), vec![(9869, 10, 10, 2915), (9934, 9, 9, 2485)]);
        assert_eq!(c.threads[0].cpu, None);
        assert_eq!(c.threads[0].buckets[0], (10, 1));
        assert_eq!(
            Options(c.options.clone()).label(),
            "histogram=400:threads=2"
        );
        let (values, histograms) = run_values(&c).unwrap();
        let h = &histograms[0];
        assert_eq!((h.count, h.overflows, h.thread, h.cpu), (9879, 10, 0, None));
        assert_eq!((h.min_ns, h.max_ns, h.max_index), (10_000, 2_915_000, None));
        assert_eq!(h.buckets[0], (10_000, 1));
        assert_eq!(h.quantity, LATENCY);
        assert_eq!(values["samples"], 9879.0 + 9943.0);
        assert_eq!(values["max"], 2915.0);
        assert_eq!(values["min"], 9.0);
        assert!(values["p99"] > 9.0 && values["p99"] < 400.0);
        assert!(!values.contains_key("missed"));
        let (metric, secondary) = metrics();
        assert_eq!(metric.name, "p99");
        assert!(secondary.iter().all(|m| m.name != "missed"));
    }

    #[test]
    fn the_sparse_form_gives_the_same_threads() {
        for (full, sparse) in [
            ("2.4-h400-q.txt", "2.10-sparse-h400-q.txt"),
            ("2.4-H1000-q.txt", "2.10-sparse-H1000-q.txt"),
        ] {
            let (a, b) = (text(full), text(sparse));
            assert_eq!(a.threads, b.threads, "{sparse}");
            // Without every row, the histogram's size is not in the file.
            assert_eq!(b.size, None);
            assert_eq!(run_values(&a).unwrap().0, run_values(&b).unwrap().0);
            assert_ne!(a.digest, b.digest);
        }
    }

    #[test]
    fn histofall_has_a_sum_column_and_all_thread_columns() {
        let c = text("2.4-H1000-q.txt");
        assert_eq!(c.threads.len(), 2);
        assert_eq!(c.size, Some(1000));
        assert_eq!(facts(&c), vec![(9667, 22, 10, 3581), (9758, 18, 7, 2741)]);
        // Newer versions print the sum column with one thread too, but no extra max column.
        let one = "# Histogram\n000003 000002\t000002\n000005 000001\t000001\n\
                   # Min Latencies: 00003\n# Avg Latencies: 00003\n# Max Latencies: 00005\n\
                   # Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n\
                   # Thread 0: \n\n";
        let c = read_histogram_text(one.as_bytes()).unwrap();
        assert_eq!(facts(&c), vec![(3, 0, 3, 5)]);
        assert_eq!(c.threads[0].buckets, vec![(3, 2), (5, 1)]);
        let h = histogram(&c, &c.threads[0]);
        assert_eq!((h.sum_ns, h.count), (11_000, 3));
        assert_eq!(c.threads[0].max_index, None);
        // A lone overflow is the maximum, and the overflow list names its cycle.
        let lone = one
            .replace("Max Latencies: 00005", "Max Latencies: 00070")
            .replace("Overflows: 00000", "Overflows: 00001")
            .replace("# Thread 0: \n", "# Thread 0: 00002\n");
        let c = read_histogram_text(lone.as_bytes()).unwrap();
        assert_eq!(facts(&c), vec![(3, 1, 3, 70)]);
        let h = histogram(&c, &c.threads[0]);
        assert_eq!((h.max_index, h.max_ns, h.sum_ns), (Some(2), 70_000, 81_000));
    }

    #[test]
    fn status_lines_give_priority_and_interval() {
        let c = text("2.4-h1000.txt");
        assert_eq!(facts(&c), vec![(9832, 11, 7, 2932), (9902, 4, 8, 2894)]);
        assert_eq!(
            Options(c.options.clone()).label(),
            "histogram=1000:interval=200:priority=90:threads=2"
        );
        assert_eq!(c.interval_us, Some(200));
    }

    #[test]
    fn histfile_and_default_system_outputs() {
        let c = text("2.4-histfile-h100.txt");
        assert_eq!(facts(&c), vec![(9932, 33, 12, 3465), (9937, 26, 11, 2543)]);
        assert!(run_values(&c).is_ok());
        // `--default-system` still prints the latency line, then a warning; -h 30 was too
        // small for this machine: most samples overflowed.
        let c = text("2.4-default-system-h30.txt");
        assert_eq!(facts(&c), vec![(6903, 3066, 12, 1423)]);
        let err = run_values(&c).unwrap_err().to_string();
        assert_eq!(
            err,
            "the p99 lies among the 3066 of 9969 samples beyond the histogram's range: run \
             cyclictest with a larger -h than 30 (the largest latency was 1423 us)"
        );
    }

    #[test]
    fn json_output_with_histograms() {
        let c = read_json(&fixture("2.4-h400.json")).unwrap();
        assert_eq!(facts(&c), vec![(9979, 5, 12, 770), (9848, 20, 11, 2980)]);
        assert_eq!(
            c.threads.iter().map(|t| t.cpu).collect::<Vec<_>>(),
            vec![Some(0), Some(1)]
        );
        assert_eq!(c.threads[0].avg, Some(26.49));
        assert_eq!(c.version.as_deref(), Some("2.40"));
        assert_eq!(
            Options(c.options.clone()).label(),
            "affinity=all:duration=2:histogram=400:interval=200:mlockall=yes:priority=90:threads=2"
        );
        assert_eq!(
            c.environment.kernel_release.as_deref(),
            Some("6.18.44-fc-v669")
        );
        assert_eq!(c.environment.tool_versions["cyclictest"], "2.40");
        assert_eq!(
            c.start_time.as_deref(),
            Some("Mon, 23 Nov 2026 17:36:22 +0000")
        );
        let (values, histograms) = run_values(&c).unwrap();
        assert_eq!(values["samples"], 9984.0 + 9868.0);
        assert_eq!(histograms[1].cpu, Some(1));
        assert_eq!(histograms[1].overflows, 20);
        // The mean: buckets exact, the overflows' part from the two-decimal mean.
        let mean = histograms[0].mean_ns().unwrap() / 1_000.0;
        assert!((mean - 26.49).abs() < 0.006, "{mean}");
    }

    #[test]
    fn json_without_histogram_is_refused() {
        let err = read_json(&fixture("2.4-no-h.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("thread \"0\" has an empty histogram"), "{err}");
        assert!(err.contains("without -h/--histogram"), "{err}");
        // Newer versions leave the key out.
        let newer = r#"{"cmdline:": "cyclictest -q --json=x", "rt_test_version:": "2.10",
            "thread": {"0": {"cycles": 10, "min": 1, "max": 2, "avg": 1.5, "cpu": -1}}}"#;
        let err = read_json(newer.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("thread \"0\" has no histogram"), "{err}");
    }

    #[test]
    fn json_facts_are_checked() {
        let doc = |thread: &str| {
            format!(
                r#"{{"cmdline:": "cyclictest -h 100 -q", "rt_test_version:": "2.10",
                "num_threads": 1, "thread": {{"0": {thread}}}}}"#
            )
        };
        let ok = doc(
            r#"{"histogram": {"3": 2, "5": 1}, "cycles": 4, "min": 3, "max": 250, "avg": 65.25, "cpu": -1}"#,
        );
        let c = read_json(ok.as_bytes()).unwrap();
        assert_eq!(facts(&c), vec![(3, 1, 3, 250)]);
        assert_eq!(c.threads[0].cpu, None);
        // One overflow is the maximum: the sum is exact.
        assert_eq!(histogram(&c, &c.threads[0]).sum_ns, 261_000);
        for (thread, expected) in [
            (
                r#"{"histogram": {"3": 5}, "cycles": 4, "min": 3, "max": 3, "avg": 3, "cpu": 0}"#,
                "thread \"0\": the histogram holds 5 samples, more than its 4 cycles",
            ),
            (
                r#"{"histogram": {"3": 4}, "cycles": 4, "min": 2, "max": 3, "avg": 3, "cpu": 0}"#,
                "thread \"0\": the minimum 2 is not its lowest non-empty bucket 3",
            ),
            (
                r#"{"histogram": {"3": 3}, "cycles": 4, "min": 3, "max": 50, "avg": 3, "cpu": 0}"#,
                "thread \"0\": 1 overflows, but the maximum 50 is below the histogram's size 100",
            ),
            (
                r#"{"histogram": {"x": 3}, "cycles": 4, "min": 3, "max": 50, "avg": 3, "cpu": 0}"#,
                "histogram key \"x\" is not a bucket number",
            ),
            (
                r#"{"histogram": {"3": -3}, "cycles": 4, "min": 3, "max": 50, "avg": 3, "cpu": 0}"#,
                "not a valid cyclictest --json file",
            ),
            // Counts that would overflow a sum (the import panicked), and numbers beyond the
            // bound, are refused with it.
            (
                r#"{"histogram": {"3": 18446744073709551615, "5": 18446744073709551615},
                    "cycles": 18446744073709551615, "min": 3, "max": 5, "avg": 3, "cpu": 0}"#,
                "thread \"0\": \"cycles\" is 18446744073709551615, more than 1125899906842624 \
                 (2^50), the most vernier reads",
            ),
            (
                r#"{"histogram": {"3": 1125899906842624, "5": 1125899906842624},
                    "cycles": 1125899906842624, "min": 3, "max": 5, "avg": 3, "cpu": 0}"#,
                "thread \"0\": its histogram holds more than 1125899906842624 (2^50) samples",
            ),
            (
                r#"{"histogram": {"99999999999999999": 1}, "cycles": 1, "min": 3, "max": 5,
                    "avg": 3, "cpu": 0}"#,
                "histogram key \"99999999999999999\" is 99999999999999999, more than",
            ),
        ] {
            let err = read_json(doc(thread).as_bytes()).unwrap_err();
            let mut text = err.to_string();
            if let Some(source) = std::error::Error::source(&err) {
                text = format!("{text}: {source}");
            }
            assert!(text.contains(expected), "{text}");
        }
        let err = read_json(
            doc(r#"{"histogram": {"3": -3}, "cycles": 4, "min": 3, "max": 3, "avg": 3, "cpu": 0}"#)
                .as_bytes(),
        )
        .unwrap_err();
        let source = std::error::Error::source(&err).unwrap().to_string();
        assert!(
            source.contains("invalid value: integer `-3`") && source.contains("line 2"),
            "{source}"
        );
        let two = doc(
            r#"{"histogram": {"3": 4}, "cycles": 4, "min": 3, "max": 3, "avg": 3, "cpu": 0}, "1": {"histogram": {"3": 4}, "cycles": 4, "min": 3, "max": 3, "avg": 3, "cpu": 1}"#,
        );
        let err = read_json(two.as_bytes()).unwrap_err().to_string();
        assert_eq!(err, "\"num_threads\" is 1, but \"thread\" holds 2");
    }

    #[test]
    fn output_without_histogram_says_what_it_lacks() {
        let err = read_histogram_text(&fixture("2.4-no-h.txt")[..])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "line 3: no '# Histogram' line: cyclictest writes its histogram only with -h or -H"
        );
    }

    /// The 2.4 fixture with `edit` applied to its text.
    fn edited(edit: impl FnOnce(&str) -> String) -> String {
        let text = String::from_utf8(fixture("2.4-h400-q.txt")).unwrap();
        edit(&text)
    }

    #[test]
    fn a_line_longer_than_any_of_cyclictest_is_refused_without_reading_on() {
        use std::io::Read as _;
        // 64 MiB of one line after the marker, as from /dev/zero or a binary file.
        let input = b"# Histogram\n".chain(std::io::repeat(b'7').take(64 << 20));
        let err = read_histogram_text(input).unwrap_err().to_string();
        assert!(
            err.contains("line 2: the line is longer than 1048576 bytes (1 MiB)"),
            "{err}"
        );
        let mut line = Vec::new();
        let mut exact = &[b'x'; MAX_LINE_BYTES][..];
        assert_eq!(
            read_line(&mut exact, &mut line).unwrap(),
            Some(MAX_LINE_BYTES)
        );
        let long = [b'x'; MAX_LINE_BYTES + 1];
        assert_eq!(read_line(&mut &long[..], &mut line).unwrap(), None);
    }

    #[test]
    fn bad_histogram_files_name_the_line_and_the_problem() {
        // Row b is line b + 3; line 403 is '# Total:', 404 '# Min Latencies:', 406 '# Max'.
        let row10 = "000010 000001\t000000\n";
        let cases: Vec<(String, &str)> =
            vec![
            (
                edited(|t| t.replace(row10, "000010 000001\n")),
                "line 13: histogram row 10 has 1 count(s), the rows before it 2 (from line 3): \
                 the row is truncated or its thread columns disagree",
            ),
            (
                edited(|t| t.replace(row10, "000010 000001\t0000x0\n")),
                "line 13: the count of column 2 '0000x0' is not a number",
            ),
            (
                edited(|t| t.replace(row10, "000010 000001\t-00001\n")),
                "line 13: the count of column 2 is -00001, a negative number (cyclictest prints \
                 unsigned ones)",
            ),
            (
                edited(|t| t.replace(row10, "000010 000002\t000000\n")),
                "line 403: '# Total:' gives 9869 samples for thread 0, but its rows hold 9870",
            ),
            (
                edited(|t| t.replace(row10, "000010 18446744073709551615\t000000\n")),
                "line 13: the count of column 1 '18446744073709551615' is too large: more than \
                 1125899906842624 (2^50), the most vernier reads",
            ),
            (
                edited(|t| t.replace("# Max Latencies: 02915 02485", "# Max Latencies: 02915")),
                "line 406: '# Max Latencies' has 1 values, but '# Min Latencies:' (line 404) \
                 has 2, one per thread: the thread columns disagree",
            ),
            (
                edited(|t| {
                    t.replace(
                        "# Max Latencies: 02915 02485",
                        "# Max Latencies: 02915 02485 00001",
                    )
                }),
                "line 406: the last '# Max Latencies' value 1 (-H: all threads) is not the \
                 largest of the others",
            ),
            (
                edited(|t| t.replace("# Min Latencies: 00010 00009", "# Min Latencies: 00010")),
                "line 405: '# Avg Latencies' has 2 values, but '# Min Latencies:' (line 404) has \
                 1, one per thread: the thread columns disagree",
            ),
            (
                edited(|t| {
                    t.replace("# Min Latencies: 00010 00009", "# Min Latencies: 00011 00009")
                }),
                "line 404: thread 0: the minimum 11 is not its lowest non-empty bucket 10",
            ),
            (
                edited(|t| {
                    t.replace("# Max Latencies: 02915 02485", "# Max Latencies: 00215 02485")
                }),
                "line 406: thread 0: 10 overflows, but the maximum 215 is within its buckets (up \
                 to 300)",
            ),
            (
                edited(|t| t[..t.find("# Min Latencies").unwrap()].to_string()),
                "line 403: the histogram block of line 2 has no '# Min Latencies:' line: the file \
                 is truncated",
            ),
            (
                edited(|t| t[..t.find("000200 ").unwrap() + 9].to_string()),
                "line 203: histogram row 200 has 1 count(s), the rows before it 2 (from line 3): \
                 the row is truncated or its thread columns disagree",
            ),
            (
                edited(|t| format!("{t}{t}")),
                "line 413: a second '# Histogram' block (the first is at line 2): one result per \
                 file",
            ),
            (
                edited(|t| t.replace("000014 000046", "000011 000046")),
                "line 17: histogram row 11 follows row 13: rows ascend",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(text_error(&input), expected);
        }
    }

    #[test]
    fn command_lines_give_the_options() {
        let label = |cmd: &str| Options(command_line_options(cmd)).label();
        assert_eq!(
            label("cyclictest -i100 -qmu -h 3500 -p95 -t2 -a0-1 --default-system"),
            "affinity=0-1:default_system=yes:histogram=3500:interval=100:mlockall=yes:\
             priority=95:threads=2"
        );
        assert_eq!(
            label(
                "cyclictest --interval=250 --distance=0 --mlockall --smp --priority=98 \
                 --histogram=1000 --histfile=output.txt --secaligned"
            ),
            "distance=0:histogram=1000:interval=250:mlockall=yes:priority=98:smp=yes"
        );
        assert_eq!(
            label("cyclictest -t -a -H 400 --duration 1h --policy fifo --json=a.json -q"),
            "affinity=all:duration=1h:histogram=400:policy=fifo:threads=all"
        );
        assert_eq!(
            label("cyclictest -t 4 -a 2 -D 30"),
            "affinity=2:duration=30:threads=4"
        );
    }

    #[test]
    fn the_mean_with_many_overflows_stays_within_what_the_file_allows() {
        let t = Thread {
            index: 0,
            cpu: None,
            buckets: vec![(10, 90)],
            overflows: 10,
            min: 10,
            max: 500,
            max_index: None,
            avg: Some(30.0),
        };
        // 3000 in all, 900 in the buckets: 2100 beyond 100 with the max at 500.
        assert_eq!(sum_units(&t, Some(100), false), 3_000);
        // A mean the overflows cannot reach is clamped: at least the max and 9 x 100.
        let low = Thread {
            avg: Some(10.0),
            ..t.clone()
        };
        assert_eq!(sum_units(&low, Some(100), false), 900 + 500 + 900);
        // A truncated text mean is taken at its midpoint.
        assert_eq!(sum_units(&t, Some(100), true), 3_050);
    }
}
