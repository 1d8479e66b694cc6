//! Interruption of a session (Ctrl-C): a flag the engine checks between runs, and the process
//! group of the run in progress, which is killed so the session can end promptly.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Shared between the signal handler thread of the CLI and the engine.
#[derive(Debug, Default)]
pub struct Interrupt {
    requested: AtomicBool,
    /// Process group of the child running now, 0 when none.
    child_group: AtomicI32,
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

    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Kills the process group of the run in progress, if any.
    pub fn kill_child(&self) {
        let group = self.child_group.load(Ordering::SeqCst);
        if group > 0 {
            // SAFETY: kill(2) with a negative pid signals that process group only. The group is
            // the child's own (it leads it) and is cleared before the child is reaped, so the id
            // cannot have been reused.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    }

    pub(crate) fn set_child_group(&self, group: i32) {
        self.child_group.store(group, Ordering::SeqCst);
    }
}
