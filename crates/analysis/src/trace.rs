//! A traced worst-case latency explained from the kernel's events, as `rtla timerlat`'s
//! auto-analysis explains one (rtla-timerlat(1), "--auto"; tools/tracing/rtla/src/
//! timerlat_aa.c describes the same parts): the delay from the timer's expiry to the
//! interrupt that ran it, the hardware interrupts and softirqs handled on the CPU before the
//! thread ran, the threads that ran instead (the blocking thread: the one that ran longest),
//! and the thread's own way back to user space, each with its share of the latency.
//!
//! The time line of the CPU is rebuilt from its events between the expiry and the moment the
//! measurement thread was switched in: between two events the CPU was in a hardware interrupt
//! (between `irq_handler_entry` and `_exit`, `local_timer_entry` and `_exit`), in a softirq
//! (`softirq_entry` to `_exit`), or running the task that the last `sched_switch` put on it.
//! ftrace's text shows microseconds, so each part is known to a microsecond per event; what
//! the events cannot place (a part before the first event, the resolution) is `unexplained`.

use serde::Serialize;
use vernier_model::trace::{ThreadTrace, TraceEvent};

/// A task that ran on the CPU between the expiry and the thread's switch-in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceThread {
    pub pid: i32,
    pub comm: String,
    /// The kernel's priority of the task as `sched_switch` shows it (0-99: real-time, 99
    /// minus the SCHED_FIFO priority; 100-139: normal), when an event showed it.
    pub prio: Option<i32>,
    /// Time it ran in the window, interrupts and softirqs taken out, nanoseconds.
    pub ns: u64,
    /// Its share of the latency.
    pub share: f64,
}

/// One part of the latency: its time and share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Part {
    pub ns: u64,
    pub share: f64,
}

/// What the events say about one traced sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceAnalysis {
    pub threshold_ns: u64,
    pub latency_ns: u64,
    /// The sample's programmed expiry and the thread's clock reading after it,
    /// CLOCK_MONOTONIC nanoseconds.
    pub expiry_ns: u64,
    pub wake_ns: u64,
    /// The measurement thread.
    pub tid: i32,
    /// From the expiry to the entry of the interrupt that ran the thread's timer (its
    /// `hrtimer_expire_entry` with `function=hrtimer_wakeup`); `None` when the events do not
    /// show that interrupt.
    pub irq_delay: Option<Part>,
    /// The CPU was idle at the expiry (the delay includes leaving an idle state).
    pub from_idle: bool,
    /// Hardware interrupt handling on the CPU after that entry, the timer's included.
    pub irq: Part,
    /// Softirq handling on the CPU.
    pub softirq: Part,
    /// Tasks other than the thread and the idle task that ran, longest first.
    pub threads: Vec<TraceThread>,
    /// The CPU idle (pid 0 current) after the timer interrupt began.
    pub idle: Part,
    /// From the thread's switch-in to its reading of the clock (the return from the sleep).
    pub return_to_user: Option<Part>,
    /// When the thread was woken (its `sched_wakeup`), nanoseconds after the expiry.
    pub woken_after_ns: Option<u64>,
    /// What the events do not place: the latency minus every part above (negative when the
    /// microsecond time stamps overlap).
    pub unexplained_ns: i64,
    /// Events the machine lacks, as `system/event`.
    pub absent_events: Vec<String>,
    /// Events kept for this sample.
    pub events: usize,
}

impl TraceAnalysis {
    /// The thread that ran longest instead of the measurement thread, if any did.
    pub fn blocker(&self) -> Option<&TraceThread> {
        self.threads.first()
    }
}

/// The value of `key` in ftrace's `key=value` fields, up to `next` (a comm may hold spaces:
/// the next key delimits it) or the next space.
fn field<'a>(fields: &'a str, key: &str, next: Option<&str>) -> Option<&'a str> {
    let start = fields
        .match_indices(key)
        .find(|(i, _)| {
            (*i == 0 || fields.as_bytes()[i - 1] == b' ')
                && fields[i + key.len()..].starts_with('=')
        })
        .map(|(i, _)| i + key.len() + 1)?;
    let rest = &fields[start..];
    let end = match next {
        Some(next) => rest.find(&format!(" {next}="))?,
        None => rest.find(' ').unwrap_or(rest.len()),
    };
    Some(&rest[..end])
}

/// The task `sched_switch` puts on the CPU: (pid, comm, prio).
fn switched_in(e: &TraceEvent) -> Option<(i32, String, Option<i32>)> {
    let (_, next) = e.fields.split_once(" ==> ")?;
    let comm = field(next, "next_comm", Some("next_pid"))?;
    let pid = field(next, "next_pid", None)?.parse().ok()?;
    let prio = field(next, "next_prio", None).and_then(|p| p.parse().ok());
    Some((pid, comm.to_string(), prio))
}

/// The task `sched_switch` takes off the CPU: (pid, comm, prio).
fn switched_out(e: &TraceEvent) -> Option<(i32, String, Option<i32>)> {
    let (prev, _) = e.fields.split_once(" ==> ")?;
    let comm = field(prev, "prev_comm", Some("prev_pid"))?;
    let pid = field(prev, "prev_pid", None)?.parse().ok()?;
    let prio = field(prev, "prev_prio", None).and_then(|p| p.parse().ok());
    Some((pid, comm.to_string(), prio))
}

fn part(ns: u64, latency_ns: u64) -> Part {
    Part {
        ns,
        share: if latency_ns == 0 {
            0.0
        } else {
            ns as f64 / latency_ns as f64
        },
    }
}

/// What ran on the CPU between an expiry and the thread's return, from `trace`'s events.
pub fn analyze_trace(trace: &ThreadTrace) -> TraceAnalysis {
    let latency = trace.latency_ns;
    let expiry = trace.expiry_ns;
    let events = &trace.events;
    // The thread's switch-in after the expiry ends the window; without one, its wake-up.
    let switch_in = events
        .iter()
        .filter(|e| e.ts_ns >= expiry && e.name == "sched_switch")
        .find(|e| switched_in(e).is_some_and(|(pid, _, _)| pid == trace.tid))
        .map(|e| e.ts_ns);
    let end = switch_in
        .unwrap_or(trace.wake_ns)
        .clamp(expiry, trace.wake_ns);
    let timer = events.iter().find(|e| {
        e.ts_ns >= expiry.saturating_sub(1_000)
            && e.ts_ns <= end
            && e.name == "hrtimer_expire_entry"
            && field(&e.fields, "function", None) == Some("hrtimer_wakeup")
    });
    // The interrupt that ran the timer began at the last interrupt entry before it.
    let irq_entry = timer.map(|t| {
        events
            .iter()
            .filter(|e| {
                e.ts_ns <= t.ts_ns
                    && e.ts_ns >= expiry.saturating_sub(1_000)
                    && (e.name == "local_timer_entry" || e.name == "irq_handler_entry")
            })
            .map(|e| e.ts_ns)
            .next_back()
            .unwrap_or(t.ts_ns)
            .max(expiry)
    });
    let woken_after_ns = events
        .iter()
        .filter(|e| e.ts_ns >= expiry.saturating_sub(1_000) && e.name == "sched_wakeup")
        .find(|e| {
            field(&e.fields, "pid", None).and_then(|p| p.parse::<i32>().ok()) == Some(trace.tid)
        })
        .map(|e| e.ts_ns.saturating_sub(expiry));

    // The state at the expiry: the task the last switch before it put on the CPU (or, with
    // none kept, the task current at the first event after it), and the interrupt nesting.
    let mut current: Option<(i32, String, Option<i32>)> = None;
    let (mut hardirq, mut softirq) = (0u32, 0u32);
    for e in events.iter().filter(|e| e.ts_ns < expiry) {
        step(e, &mut current, &mut hardirq, &mut softirq);
    }
    if current.is_none() {
        current = events
            .iter()
            .find(|e| e.ts_ns >= expiry)
            .map(|e| (e.pid, e.comm.clone(), None));
    }
    let from_idle = current.as_ref().is_some_and(|(pid, _, _)| *pid == 0);

    let start = irq_entry.unwrap_or(expiry);
    let (mut irq_ns, mut softirq_ns, mut idle_ns) = (0u64, 0u64, 0u64);
    let mut threads: Vec<TraceThread> = Vec::new();
    let mut at = expiry;
    for e in events
        .iter()
        .filter(|e| e.ts_ns >= expiry && e.ts_ns <= end)
        .chain(std::iter::once(&TraceEvent {
            ts_ns: end,
            cpu: 0,
            pid: 0,
            comm: String::new(),
            flags: String::new(),
            name: String::new(),
            fields: String::new(),
        }))
    {
        // The time from `at` to this event, after the timer interrupt began.
        let from = at.max(start);
        let gap = e.ts_ns.saturating_sub(from);
        if gap > 0 {
            if hardirq > 0 {
                irq_ns += gap;
            } else if softirq > 0 {
                softirq_ns += gap;
            } else if let Some((pid, comm, prio)) = &current {
                if *pid == 0 {
                    idle_ns += gap;
                } else if *pid != trace.tid {
                    match threads.iter_mut().find(|t| t.pid == *pid) {
                        Some(t) => t.ns += gap,
                        None => threads.push(TraceThread {
                            pid: *pid,
                            comm: comm.clone(),
                            prio: *prio,
                            ns: gap,
                            share: 0.0,
                        }),
                    }
                }
            }
        }
        at = at.max(e.ts_ns);
        // A switch's prio of the task taken off completes what its switch-in did not show,
        // and its comm is the task's name as it leaves: a thread that names itself after it
        // was switched in (a new thread takes its creator's name until prctl(PR_SET_NAME))
        // is called by the name it had while it ran.
        if e.name == "sched_switch" {
            if let Some((pid, comm, prio)) = switched_out(e) {
                if let Some(t) = threads.iter_mut().find(|t| t.pid == pid) {
                    if let Some(prio) = prio {
                        t.prio.get_or_insert(prio);
                    }
                    t.comm = comm;
                }
            }
        }
        // An event runs in the context of the task on the CPU. A task seen there without the
        // switch to it kept (on a KVM guest a SCHED_FIFO spinner was once kept only by the
        // interrupts it took and its switch away) is the one running from this event on.
        if !e.name.is_empty() && current.as_ref().map(|(pid, _, _)| *pid) != Some(e.pid) {
            current = Some((e.pid, e.comm.clone(), None));
        }
        step(e, &mut current, &mut hardirq, &mut softirq);
    }
    for t in &mut threads {
        t.share = part(t.ns, latency).share;
    }
    threads.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.pid.cmp(&b.pid)));
    let irq_delay = irq_entry.map(|entry| part(entry - expiry, latency));
    let return_to_user = switch_in.map(|s| part(trace.wake_ns.saturating_sub(s), latency));
    let explained = irq_delay.map_or(0, |p| p.ns)
        + irq_ns
        + softirq_ns
        + idle_ns
        + threads.iter().map(|t| t.ns).sum::<u64>()
        + return_to_user.map_or(0, |p| p.ns);
    TraceAnalysis {
        threshold_ns: trace.threshold_ns,
        latency_ns: latency,
        expiry_ns: expiry,
        wake_ns: trace.wake_ns,
        tid: trace.tid,
        irq_delay,
        from_idle,
        irq: part(irq_ns, latency),
        softirq: part(softirq_ns, latency),
        threads,
        idle: part(idle_ns, latency),
        return_to_user,
        woken_after_ns,
        unexplained_ns: latency as i64 - explained as i64,
        absent_events: trace.absent_events.clone(),
        events: events.len(),
    }
}

/// Follows one event: the task on the CPU and the interrupt nesting.
fn step(
    e: &TraceEvent,
    current: &mut Option<(i32, String, Option<i32>)>,
    hardirq: &mut u32,
    softirq: &mut u32,
) {
    match e.name.as_str() {
        "sched_switch" => {
            if let Some(next) = switched_in(e) {
                *current = Some(next);
            }
        }
        "irq_handler_entry" | "local_timer_entry" => *hardirq += 1,
        "irq_handler_exit" | "local_timer_exit" => *hardirq = hardirq.saturating_sub(1),
        "softirq_entry" => *softirq += 1,
        "softirq_exit" => *softirq = softirq.saturating_sub(1),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn event(us: u64, pid: i32, comm: &str, name: &str, fields: &str) -> TraceEvent {
        TraceEvent {
            ts_ns: us * 1_000,
            cpu: 1,
            pid,
            comm: comm.into(),
            flags: String::new(),
            name: name.into(),
            fields: fields.into(),
        }
    }

    fn switch(us: u64, from: (&str, i32, i32), to: (&str, i32, i32)) -> TraceEvent {
        event(
            us,
            from.1,
            from.0,
            "sched_switch",
            &format!(
                "prev_comm={} prev_pid={} prev_prio={} prev_state=R ==> next_comm={} \
                 next_pid={} next_prio={}",
                from.0, from.1, from.2, to.0, to.1, to.2
            ),
        )
    }

    /// A spinner at SCHED_FIFO 80 (prio 19) holds CPU 1 from 900 us to 3,000 us; the
    /// measurement thread (tid 50, prio 49) is due at 1,000 us, its timer interrupt comes at
    /// 1,004 us, a softirq runs 2,000-2,010 us, it runs at 3,000 us and reads the clock at
    /// 3,005 us.
    fn spin() -> ThreadTrace {
        let spinner = ("spin thread", 77, 19);
        let events = vec![
            switch(800, ("<idle>", 0, 120), ("cc1", 60, 120)),
            switch(900, ("cc1", 60, 120), spinner),
            event(1_004, 77, "spin thread", "local_timer_entry", "vector=236"),
            event(
                1_005,
                77,
                "spin thread",
                "hrtimer_expire_entry",
                "hrtimer=00000000a function=hrtimer_wakeup now=1005000",
            ),
            event(
                1_006,
                77,
                "spin thread",
                "sched_wakeup",
                "comm=latency/1 pid=50 prio=49 target_cpu=001",
            ),
            event(
                1_007,
                77,
                "spin thread",
                "hrtimer_expire_exit",
                "hrtimer=00000000a",
            ),
            event(1_008, 77, "spin thread", "local_timer_exit", "vector=236"),
            event(
                2_000,
                77,
                "spin thread",
                "softirq_entry",
                "vec=9 [action=RCU]",
            ),
            event(
                2_010,
                77,
                "spin thread",
                "softirq_exit",
                "vec=9 [action=RCU]",
            ),
            switch(3_000, ("spin thread", 77, 19), ("latency/1", 50, 49)),
            event(
                3_006,
                50,
                "latency/1",
                "tracing_mark_write",
                "vernier-latency ...",
            ),
        ];
        ThreadTrace {
            threshold_ns: 1_000_000,
            latency_ns: 2_005_000,
            expiry_ns: 1_000_000,
            wake_ns: 3_005_000,
            tid: 50,
            absent_events: Vec::new(),
            truncated: false,
            events,
        }
    }

    #[test]
    fn the_spinning_thread_is_the_blocker_and_the_parts_add_up() {
        let a = analyze_trace(&spin());
        assert_eq!(a.irq_delay.unwrap().ns, 4_000);
        assert!(!a.from_idle);
        assert_eq!(a.irq.ns, 4_000);
        assert_eq!(a.softirq.ns, 10_000);
        let blocker = a.blocker().unwrap();
        assert_eq!((blocker.pid, blocker.comm.as_str()), (77, "spin thread"));
        assert_eq!(blocker.prio, Some(19));
        // 1,008-2,000 and 2,010-3,000 us.
        assert_eq!(blocker.ns, 1_982_000);
        assert!((blocker.share - 1_982.0 / 2_005.0).abs() < 1e-12);
        assert_eq!(a.threads.len(), 1, "{:?}", a.threads);
        assert_eq!(a.return_to_user.unwrap().ns, 5_000);
        assert_eq!(a.woken_after_ns, Some(6_000));
        assert_eq!(a.unexplained_ns, 0);
    }

    #[test]
    fn a_thread_that_renamed_itself_is_called_by_the_name_it_left_with() {
        let mut trace = spin();
        // Switched in under its creator's name; it leaves as "spin thread".
        trace.events[1] = switch(900, ("cc1", 60, 120), ("test main", 77, 19));
        let a = analyze_trace(&trace);
        let blocker = a.blocker().unwrap();
        assert_eq!((blocker.pid, blocker.comm.as_str()), (77, "spin thread"));
    }

    #[test]
    fn a_thread_running_without_its_switch_kept_is_named_by_its_events() {
        let mut trace = spin();
        // The CPU went idle at 800 us; the switch to the spinner is missing, its interrupts
        // and its switch away are kept.
        trace.events[0] = switch(800, ("latency/1", 50, 49), ("swapper/1", 0, 120));
        trace.events.remove(1);
        let a = analyze_trace(&trace);
        let blocker = a.blocker().unwrap();
        assert_eq!((blocker.pid, blocker.comm.as_str()), (77, "spin thread"));
        assert_eq!(blocker.prio, Some(19));
        assert_eq!(blocker.ns, 1_982_000);
        assert_eq!(a.unexplained_ns, 0);
    }

    #[test]
    fn without_the_timer_s_events_the_time_goes_to_what_ran() {
        let mut trace = spin();
        trace
            .events
            .retain(|e| !e.name.starts_with("hrtimer") && !e.name.starts_with("local_timer"));
        trace.absent_events = vec!["irq_vectors/local_timer_entry".into()];
        let a = analyze_trace(&trace);
        assert_eq!(a.irq_delay, None);
        assert_eq!(a.irq.ns, 0);
        assert_eq!(a.blocker().unwrap().ns, 2_000_000 - 10_000);
        assert_eq!(a.unexplained_ns, 0);
        assert_eq!(a.absent_events.len(), 1);
    }

    #[test]
    fn an_idle_cpu_s_delay_is_said_to_come_from_idle() {
        let trace = ThreadTrace {
            threshold_ns: 10_000,
            latency_ns: 60_000,
            expiry_ns: 1_000_000,
            wake_ns: 1_060_000,
            tid: 50,
            absent_events: Vec::new(),
            truncated: false,
            events: vec![
                switch(900, ("latency/1", 50, 49), ("swapper/1", 0, 120)),
                event(1_050, 0, "<idle>", "local_timer_entry", "vector=236"),
                event(
                    1_051,
                    0,
                    "<idle>",
                    "hrtimer_expire_entry",
                    "hrtimer=1 function=hrtimer_wakeup now=1",
                ),
                event(1_052, 0, "<idle>", "local_timer_exit", "vector=236"),
                switch(1_055, ("swapper/1", 0, 120), ("latency/1", 50, 49)),
            ],
        };
        let a = analyze_trace(&trace);
        assert!(a.from_idle);
        assert_eq!(a.irq_delay.unwrap().ns, 50_000);
        assert_eq!(a.irq.ns, 2_000);
        // The idle task is no blocker.
        assert_eq!(a.blocker(), None);
        assert_eq!(a.idle.ns, 3_000);
        assert_eq!(a.return_to_user.unwrap().ns, 5_000);
        assert_eq!(a.unexplained_ns, 0);
    }

    #[test]
    fn fields_are_read_up_to_the_next_key() {
        let f = "prev_comm=opt cgu.14 prev_pid=18903 prev_prio=130 prev_state=R ==> \
                 next_comm=a b next_pid=5 next_prio=120";
        let e = event(0, 1, "x", "sched_switch", f);
        assert_eq!(switched_in(&e), Some((5, "a b".to_string(), Some(120))));
        assert_eq!(
            switched_out(&e),
            Some((18903, "opt cgu.14".to_string(), Some(130)))
        );
        assert_eq!(field("comm=x pid=3", "pid", None), Some("3"));
        assert_eq!(field("xpid=3", "pid", None), None);
    }
}
