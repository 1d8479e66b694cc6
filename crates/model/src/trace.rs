//! A traced worst-case latency (`latency:trace=US`): the kernel's events on the CPU of a
//! measurement thread in the milliseconds before its first sample above the threshold, kept
//! with that thread's histogram ([`crate::RunHistogram::trace`]). The events are ftrace's, as
//! its text form shows them (Documentation/trace/ftrace.rst, "Output format"); reading that
//! text is `vernier_formats::ftrace`, explaining the latency from them
//! `vernier_analysis::trace`.

use serde::{Deserialize, Serialize};

/// The events a traced latency records, by tracefs name (`system/event`), in the order
/// `rtla timerlat`'s auto-analysis reads them: the scheduler's switches and wake-ups, hardware
/// interrupts and softirqs, the hrtimer that wakes the thread, and the local timer interrupt
/// that runs it (x86's `irq_vectors`; other architectures have none, which is recorded).
pub const TRACE_EVENTS: &[&str] = &[
    "sched/sched_switch",
    "sched/sched_wakeup",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "timer/hrtimer_expire_entry",
    "timer/hrtimer_expire_exit",
    "irq_vectors/local_timer_entry",
    "irq_vectors/local_timer_exit",
];

/// What the marker written at a traced sample starts with, so that the reader finds it among
/// other writers' markers.
pub const MARKER_PREFIX: &str = "vernier-latency";

/// How long before the programmed expiry of the traced sample its events are kept: enough
/// to show what was running when the timer was due, and what had been running before.
pub const KEPT_BEFORE_EXPIRY_NS: u64 = 2_000_000;

/// The most events kept of one traced sample (a latency of seconds on a busy CPU would
/// otherwise keep megabytes).
pub const MAX_KEPT_EVENTS: usize = 20_000;

/// One event of an ftrace buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Time stamp in nanoseconds of the trace clock (CLOCK_MONOTONIC: the instance's
    /// `trace_clock` is `mono`), to the microsecond that ftrace's text shows.
    pub ts_ns: u64,
    pub cpu: u32,
    /// The task that was current when the event fired (0: the idle task).
    pub pid: i32,
    pub comm: String,
    /// The context flags (`d.h..`: irqs off, need-resched, hardirq/softirq, preempt depth,
    /// migrate-disable); empty when the text had none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub flags: String,
    /// The event's name (`sched_switch`, `tracing_mark_write`).
    pub name: String,
    /// The event's fields as ftrace prints them (`prev_comm=... ==> next_comm=...`).
    pub fields: String,
}

/// The trace of one measurement thread's first sample above the threshold in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadTrace {
    /// The threshold (`trace=`), nanoseconds.
    pub threshold_ns: u64,
    /// The traced sample: wake-up minus programmed expiry, nanoseconds.
    pub latency_ns: u64,
    /// The programmed expiry of the sample's timer, CLOCK_MONOTONIC nanoseconds.
    pub expiry_ns: u64,
    /// When the thread read the clock after waking, CLOCK_MONOTONIC nanoseconds.
    pub wake_ns: u64,
    /// The measurement thread's id (its `pid` in the events).
    pub tid: i32,
    /// Events the machine does not have (its `available_events` lacks them), as `system/event`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_events: Vec<String>,
    /// More events than [`MAX_KEPT_EVENTS`] fell in the window; the earliest were dropped.
    #[serde(default)]
    pub truncated: bool,
    /// The CPU's events from [`KEPT_BEFORE_EXPIRY_NS`] before the expiry to the marker, in
    /// time order.
    pub events: Vec<TraceEvent>,
}
