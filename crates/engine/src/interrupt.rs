//! Interruption of a session: a flag the engine checks between runs, and the process group of
//! the run in progress, which is killed so the session can end promptly.
//!
//! Ctrl-C (SIGINT), SIGTERM (what systemd, `timeout` and `kill` send) and SIGHUP (what a closed
//! terminal sends) all end a session the same way, through [`watch_signals`]: the first one
//! requests the interrupt, so the session stops after killing the run in progress, records
//! what it has and restores the system on its ordinary way out; a repeated one is for when
//! that way out is stuck, and leaves at once through the caller's hook.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use vernier_sys::process::Signaller;

/// The signals that end a session (signal(7)): their default action would terminate vernier
/// without restoring what its setup changed or recording how the session ended.
pub const ENDING_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Shared between the signal watcher thread and the engine.
#[derive(Debug, Default)]
pub struct Interrupt {
    requested: Arc<AtomicBool>,
    /// The signal that requested the interrupt, 0 when none did.
    signal: AtomicI32,
    /// The process group of the child running now.
    child_group: Mutex<Option<Signaller>>,
}

impl Interrupt {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the session to stop: no new run starts and the run in progress is killed.
    pub fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
        self.kill_child();
    }

    /// [`Interrupt::request`] on receipt of `signal`.
    pub fn request_by_signal(&self, signal: i32) {
        // Only the first signal is kept: it is the reason the session stopped.
        let _ = self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        self.request();
    }

    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// The signal that requested the interrupt, if a signal did.
    pub fn signal(&self) -> Option<i32> {
        Some(self.signal.load(Ordering::SeqCst)).filter(|&s| s != 0)
    }

    /// A flag that becomes true when the interrupt is requested, for waits outside the engine
    /// (the setup's cooldown and idle gate) to end early.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.requested)
    }

    /// Kills the process group of the run in progress, if any. Its signaller does nothing once
    /// the child is reaped, so the kill cannot reach a process that took over the id.
    pub fn kill_child(&self) {
        if let Some(group) = self.child().as_ref() {
            group.kill();
        }
    }

    pub(crate) fn set_child(&self, group: Option<Signaller>) {
        *self.child() = group;
    }

    fn child(&self) -> std::sync::MutexGuard<'_, Option<Signaller>> {
        // The value is one assignment: a panic while it was held left it whole.
        self.child_group
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What [`watch_signals`] received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalEvent {
    /// The first ending signal: the interrupt has been requested.
    First(i32),
    /// A later one: the run in progress has been killed again; the hook decides how to leave.
    Repeated(i32),
}

/// From now on, receives [`ENDING_SIGNALS`] in a thread of its own instead of dying by them.
/// The first requests `interrupt`; every one is then passed to `on_signal`. The signal
/// handlers only record the signal (signal-hook's self-pipe: nothing else is
/// async-signal-safe, signal-safety(7)), so `on_signal` runs in an ordinary thread and may do
/// anything, such as restoring the system and exiting.
pub fn watch_signals(
    interrupt: Arc<Interrupt>,
    mut on_signal: impl FnMut(SignalEvent) + Send + 'static,
) -> std::io::Result<()> {
    let mut signals = Signals::new(ENDING_SIGNALS)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut first = true;
            for signal in signals.forever() {
                if first {
                    first = false;
                    interrupt.request_by_signal(signal);
                    on_signal(SignalEvent::First(signal));
                } else {
                    interrupt.kill_child();
                    on_signal(SignalEvent::Repeated(signal));
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_is_the_reason() {
        let interrupt = Interrupt::new();
        let flag = interrupt.flag();
        assert!(!interrupt.is_requested() && interrupt.signal().is_none());
        interrupt.request_by_signal(SIGTERM);
        interrupt.request_by_signal(SIGINT);
        assert!(interrupt.is_requested());
        assert!(flag.load(Ordering::SeqCst));
        assert_eq!(interrupt.signal(), Some(SIGTERM));
        let plain = Interrupt::new();
        plain.request();
        assert_eq!(plain.signal(), None);
    }
}
