//! ftrace's text form: the lines of a tracefs `trace` file (Documentation/trace/ftrace.rst,
//! "Output format"), which `trace-cmd report` prints in the same columns:
//!
//! ```text
//!       opt cgu.14-18903   [000] dNh3. 47140.778292: sched_wakeup: comm=rcu pid=15 prio=120 target_cpu=000
//! ```
//!
//! the task (its `comm`, which may hold spaces and dashes, a dash and its pid), the CPU in
//! brackets, the context flags (present with the `irq-info` option, the default), the time
//! stamp in seconds with six or nine decimals, the event's name and its fields. Read into
//! [`TraceEvent`]s, written back the same way ([`write_events`]), and the marker a traced
//! latency writes (`latency:trace=US`), formatted without allocating ([`format_marker`]) and
//! read back ([`parse_marker`]). [`keep_window`] keeps a traced sample's milliseconds of one
//! CPU, compactly, for the run's record.

use std::fmt::Write as _;

use vernier_model::trace::{
    ThreadTrace, TraceEvent, KEPT_BEFORE_EXPIRY_NS, MARKER_PREFIX, MAX_KEPT_EVENTS,
};

/// The event a write to `trace_marker` records.
pub const MARKER_EVENT: &str = "tracing_mark_write";

/// The facts a traced sample's marker carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// The measurement thread, from 0.
    pub thread: u32,
    pub latency_ns: u64,
    /// Programmed expiry and wake-up, CLOCK_MONOTONIC nanoseconds.
    pub expiry_ns: u64,
    pub wake_ns: u64,
}

/// Writes `marker`'s line into `buf` and returns its length, or `None` when `buf` is too small
/// (80 bytes always suffice). Allocates nothing: a measuring thread calls it right after the
/// sample.
pub fn format_marker(marker: &Marker, buf: &mut [u8]) -> Option<usize> {
    use std::io::Write as _;
    let capacity = buf.len();
    let mut rest: &mut [u8] = buf;
    write!(
        rest,
        "{MARKER_PREFIX} thread={} latency={} expiry={} wake={}",
        marker.thread, marker.latency_ns, marker.expiry_ns, marker.wake_ns
    )
    .ok()?;
    Some(capacity - rest.len())
}

/// The marker in a `tracing_mark_write` event's fields, if it is one of [`format_marker`]'s.
pub fn parse_marker(fields: &str) -> Option<Marker> {
    let mut words = fields.trim().split(' ');
    if words.next()? != MARKER_PREFIX {
        return None;
    }
    let mut field = |name: &str| -> Option<u64> {
        words
            .next()?
            .strip_prefix(name)?
            .strip_prefix('=')?
            .parse()
            .ok()
    };
    Some(Marker {
        thread: u32::try_from(field("thread")?).ok()?,
        latency_ns: field("latency")?,
        expiry_ns: field("expiry")?,
        wake_ns: field("wake")?,
    })
}

/// The events of an ftrace text, in the order given; comment lines (`#`), blank lines and
/// lines of another shape (a `CPU:1 [LOST 12 EVENTS]` notice) are skipped.
pub fn parse_events(text: &str) -> Vec<TraceEvent> {
    text.lines().filter_map(parse_line).collect()
}

/// One line of ftrace's text form, or `None` when it is not an event.
pub fn parse_line(line: &str) -> Option<TraceEvent> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    // The CPU column is the first ` [digits] ` preceded by `-pid` (a comm may hold brackets).
    let mut search = 0;
    let (task, cpu, rest) = loop {
        let open = search + line[search..].find(" [")?;
        search = open + 2;
        let after = &line[open + 2..];
        let Some(close) = after.find(']') else {
            continue;
        };
        let digits = &after[..close];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let task = strip_tgid(line[..open].trim());
        let Some((_, pid)) = task.rsplit_once('-') else {
            continue;
        };
        if pid.parse::<i32>().is_err() {
            continue;
        }
        break (task, digits.parse::<u32>().ok()?, &after[close + 1..]);
    };
    let (comm, pid) = task.rsplit_once('-')?;
    let mut rest = rest.trim_start();
    // The flags column, when present, comes before the time stamp, which ends with ':'.
    let mut flags = "";
    let first = rest.split(' ').next()?;
    if parse_timestamp(first.strip_suffix(':').unwrap_or("")).is_none() {
        flags = first;
        rest = rest[first.len()..].trim_start();
    }
    let (stamp, rest) = rest.split_once(": ")?;
    let ts_ns = parse_timestamp(stamp.trim())?;
    let (name, fields) = match rest.split_once(": ") {
        Some((name, fields)) => (name, fields),
        None => (rest.strip_suffix(':').unwrap_or(rest), ""),
    };
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    Some(TraceEvent {
        ts_ns,
        cpu,
        pid: pid.parse().ok()?,
        comm: comm.to_string(),
        flags: flags.to_string(),
        name: name.to_string(),
        fields: fields.trim_end().to_string(),
    })
}

/// `comm-pid` without the `(tgid)` column that the `record-tgid` option adds.
fn strip_tgid(task: &str) -> &str {
    match task.strip_suffix(')').and_then(|t| t.rsplit_once('(')) {
        Some((before, tgid)) if tgid.trim().bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
            before.trim_end()
        }
        _ => task,
    }
}

/// `47140.778292` (seconds with 1 to 9 decimals) in nanoseconds.
pub fn parse_timestamp(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !secs.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    secs.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac.parse::<u64>().ok()? * scale)
}

/// The events of `text` on CPU `cpu` around the first marker of thread `thread` there: from
/// [`KEPT_BEFORE_EXPIRY_NS`] before the sample's programmed expiry to the marker itself, at
/// most the last [`MAX_KEPT_EVENTS`] of them. `None` when the CPU has no such marker (the
/// buffer was overwritten, or another thread crossed the threshold first).
pub fn keep_window(
    events: Vec<TraceEvent>,
    cpu: u32,
    thread: u32,
    threshold_ns: u64,
    absent_events: Vec<String>,
) -> Option<ThreadTrace> {
    let (at, marker, tid) = events.iter().enumerate().find_map(|(i, e)| {
        let m = (e.cpu == cpu && e.name == MARKER_EVENT)
            .then(|| parse_marker(&e.fields))
            .flatten()
            .filter(|m| m.thread == thread)?;
        Some((i, m, e.pid))
    })?;
    // The trace clock shows microseconds: an event in the expiry's microsecond is kept.
    let from = marker
        .expiry_ns
        .saturating_sub(KEPT_BEFORE_EXPIRY_NS)
        .saturating_sub(1_000);
    let mut kept: Vec<TraceEvent> = events
        .into_iter()
        .take(at + 1)
        .filter(|e| e.cpu == cpu && e.ts_ns >= from)
        .collect();
    let truncated = kept.len() > MAX_KEPT_EVENTS;
    if truncated {
        kept.drain(..kept.len() - MAX_KEPT_EVENTS);
    }
    Some(ThreadTrace {
        threshold_ns,
        latency_ns: marker.latency_ns,
        expiry_ns: marker.expiry_ns,
        wake_ns: marker.wake_ns,
        tid,
        absent_events,
        truncated,
        events: kept,
    })
}

/// `events` in ftrace's text form, a line each, as [`parse_line`] reads them back (and as
/// `trace-cmd report` prints them); `header` lines first, as `#` comments.
pub fn write_events(header: &[String], events: &[TraceEvent]) -> String {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    for e in events {
        let task = format!("{}-{}", e.comm, e.pid);
        let flags = if e.flags.is_empty() {
            String::new()
        } else {
            format!("{} ", e.flags)
        };
        let _ = writeln!(
            out,
            "{task:>22} [{:03}] {flags}{}.{:06}: {}: {}",
            e.cpu,
            e.ts_ns / 1_000_000_000,
            e.ts_ns % 1_000_000_000 / 1_000,
            e.name,
            e.fields
        );
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Lines of a real buffer of this machine's kernel (6.18, x86_64, KVM guest), with the
    /// shapes a reader meets: a comm with a space and a dash, the flags column, markers.
    const FIXTURE: &str = include_str!("../tests/fixtures/ftrace-spin.txt");

    #[test]
    fn reads_the_columns_of_an_event_line() {
        let e = parse_line(
            "      opt cgu.14-18903   [000] dNh3. 47140.778292: sched_wakeup: comm=memfd:sealed-91 \
             pid=14927 prio=120 target_cpu=000",
        )
        .unwrap();
        assert_eq!(
            (e.comm.as_str(), e.pid, e.cpu, e.flags.as_str(), e.ts_ns),
            ("opt cgu.14", 18903, 0, "dNh3.", 47_140_778_292_000)
        );
        assert_eq!(e.name, "sched_wakeup");
        assert!(e.fields.starts_with("comm=memfd:sealed-91 pid=14927"));
        // Without the flags column (irq-info off), with a tgid column, nine decimals.
        let e = parse_line(
            "  <idle>-0     (-------) [001] 12.000000005: local_timer_entry: vector=236",
        )
        .unwrap();
        assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("<idle>", 0, 1));
        assert_eq!((e.flags.as_str(), e.ts_ns), ("", 12_000_000_005));
        // A comm holding brackets and a dash followed by digits.
        let e = parse_line(" a [1]-b-7-42 [003] d.... 1.5: sched_switch: x=1").unwrap();
        assert_eq!(
            (e.comm.as_str(), e.pid, e.cpu, e.ts_ns),
            ("a [1]-b-7", 42, 3, 1_500_000_000)
        );
        for not_an_event in [
            "# tracer: nop",
            "",
            "CPU:1 [LOST 12 EVENTS]",
            "bash-1 [000] d.... x.5: sched_switch: y",
        ] {
            assert_eq!(parse_line(not_an_event), None, "{not_an_event}");
        }
    }

    #[test]
    fn a_marker_is_formatted_without_allocating_and_read_back() {
        let marker = Marker {
            thread: 3,
            latency_ns: u64::MAX,
            expiry_ns: u64::MAX,
            wake_ns: u64::MAX,
        };
        let mut buf = [0u8; 128];
        let n = format_marker(&marker, &mut buf).unwrap();
        assert!(n <= 128);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert_eq!(parse_marker(text), Some(marker));
        assert_eq!(format_marker(&marker, &mut [0u8; 16]), None);
        assert_eq!(parse_marker("vernier-latency thread=x"), None);
        assert_eq!(parse_marker("someone else's marker"), None);
    }

    #[test]
    fn the_window_is_the_cpu_s_events_from_before_the_expiry_to_the_marker() {
        let events = parse_events(FIXTURE);
        assert!(events.len() > 20, "{}", events.len());
        let trace = keep_window(events.clone(), 1, 0, 1_000_000, vec!["x/y".into()]).unwrap();
        let last = trace.events.last().unwrap();
        assert_eq!(last.name, MARKER_EVENT);
        assert_eq!(trace.tid, last.pid);
        assert!(trace.latency_ns > 1_000_000);
        assert_eq!(trace.wake_ns - trace.expiry_ns, trace.latency_ns);
        assert!(trace
            .events
            .iter()
            .all(|e| e.cpu == 1 && e.ts_ns + KEPT_BEFORE_EXPIRY_NS + 1_000 >= trace.expiry_ns));
        assert!(trace.events.len() < events.len());
        assert_eq!(trace.absent_events, vec!["x/y".to_string()]);
        // No marker of that thread, or none on that CPU.
        assert_eq!(keep_window(events.clone(), 1, 7, 1, Vec::new()), None);
        assert_eq!(keep_window(events, 0, 0, 1, Vec::new()), None);
    }

    #[test]
    fn written_events_read_back_the_same() {
        let events = parse_events(FIXTURE);
        let text = write_events(&["session x".to_string()], &events);
        assert!(text.starts_with("# session x\n"));
        assert_eq!(parse_events(&text), events);
    }
}
