//! The interval thread allocates nothing per sample once the start sample is taken: a counting
//! global allocator (this test binary's only) counts the allocations of each thread, and a
//! probe monitor sampled last in every round records the count of the thread that sampled it
//! (the start sample is the caller's, the interval samples the interval thread's).

#![allow(clippy::unwrap_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use vernier_monitor::sampler::POINTS_CAPACITY;
use vernier_monitor::spec::build;
use vernier_monitor::{
    parse_monitor_list, MetricNames, Monitor, MonitorError, Reading, RunSampler,
};
use vernier_sys::Roots;

struct Counting;

thread_local! {
    /// Allocations (and reallocations) made by this thread.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // try_with: a thread being torn down may still free memory.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only a
// thread-local Cell, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Records the sampler thread's allocation count at each of its samples, into room reserved
/// up front, and says so on a channel (with room for the message) after `rounds` samples.
struct Probe {
    counts: Arc<Mutex<Vec<u64>>>,
    rounds: usize,
    done: mpsc::SyncSender<()>,
    names: MetricNames,
}

impl Monitor for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        Ok(())
    }
    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        let now = ALLOCATIONS.with(Cell::get);
        let mut counts = self.counts.lock().unwrap();
        if counts.len() < counts.capacity() {
            counts.push(now);
        }
        // The start sample, then `rounds` interval samples.
        if counts.len() == self.rounds + 1 {
            let _ = self.done.try_send(());
        }
        out.push(Reading::gauge(self.names.get("n"), "count", now as f64));
        Ok(())
    }
}

#[test]
fn sampling_rounds_allocate_nothing_after_the_start() {
    // Fewer rounds than the points reserved per series, so no series needs to grow.
    let rounds = 40.min(POINTS_CAPACITY - 8);
    let interval = Duration::from_millis(5);
    let counts = Arc::new(Mutex::new(Vec::with_capacity(2 * POINTS_CAPACITY)));
    let (done_tx, done_rx) = mpsc::sync_channel(1);
    let roots = Roots::real();
    // The default set and the per-CPU monitors of latency runs (cpuidle records that it is
    // unsupported where there is no cpuidle driver). Every IRQ line is kept: with the default
    // top 5 per CPU, which lines of cpu0 moved most in so short a run is the machine's.
    let specs =
        parse_monitor_list("default,interrupts:per-cpu=on:top=100000,softirqs,cpuidle").unwrap();
    let mut monitors: Vec<(Box<dyn Monitor>, Duration)> = specs
        .iter()
        .map(|spec| (build(spec, &roots).unwrap(), interval))
        .collect();
    let names: Vec<&str> = monitors.iter().map(|(m, _)| m.name()).collect();
    assert!(
        names.contains(&"stat") && names.contains(&"interrupts"),
        "{names:?}"
    );
    monitors.push((
        Box::new(Probe {
            counts: Arc::clone(&counts),
            rounds,
            done: done_tx,
            names: MetricNames::default(),
        }),
        interval,
    ));
    let sampler = RunSampler::start_monitors(monitors, 0).unwrap();
    done_rx.recv().unwrap();
    let data = sampler.finish();
    assert!(data.failures.is_empty(), "{:?}", data.failures);

    let counts = counts.lock().unwrap().clone();
    assert!(counts.len() > rounds, "{} samples", counts.len());
    // The interval thread's samples, from the first after the start sample.
    let counts = &counts[1..=rounds];
    // The first rounds make the series, names and buffers (and the channel's waiting state);
    // from the fourth on, a round allocates nothing.
    let settled = counts[3];
    let per_round: Vec<u64> = counts.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(
        counts[rounds - 1],
        settled,
        "allocations per round after the start: {per_round:?}"
    );
    // The monitors did record every round.
    let stat = data.find("stat", "ctxt").unwrap();
    assert!(stat.points.len() >= rounds, "{} points", stat.points.len());
    assert!(data.find("softirqs", "cpu0.TIMER").is_some());
    assert!(data.find("interrupts", "cpu0.irq_total").is_some());
    assert!(data.find("interrupts", "cpu0.irq.LOC").is_some() || !cfg!(target_arch = "x86_64"));
}
