//! What every in-process load shares: its threads in the supervisor, started by [`start`].
//! Setup that can fail (pinning, the file, the sockets) happens before [`start`] returns, so
//! that a load that cannot run fails before anything is measured; an error later is sent on
//! the returned channel and ends the supervisor with it. Each load's own work is in its file
//! under `crate::loads`.
//!
//! The loads pace themselves against CLOCK_MONOTONIC: each period's work starts at a fixed
//! time, so a slow burst shortens the following sleep instead of shifting every later burst.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use vernier_sys::clock::monotonic_ns;

use crate::loads::Work;
use crate::spec::Load;

pub(crate) const MIB: usize = 1 << 20;

/// Starts the threads of an in-process load; `dir` is the directory a file load writes in.
/// Returns the channel on which a thread reports the error that ended it.
pub(crate) fn start(load: &Load, dir: Option<&Path>) -> Result<Receiver<String>, String> {
    let (errors, received) = channel();
    match load.entry().work() {
        Work::Threads { start, .. } => start(load.options(), dir, &errors)?,
        Work::Program(_) => return Err(format!("load '{}' is not in-process", load.name())),
    }
    Ok(received)
}

pub(crate) fn need_dir(dir: Option<&Path>) -> Result<&Path, String> {
    dir.ok_or_else(|| "no directory to write in was given".to_string())
}

pub(crate) fn spawn(
    name: &str,
    errors: &Sender<String>,
    work: impl FnOnce() -> String + Send + 'static,
) -> Result<(), String> {
    let errors = errors.clone();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = errors.send(work());
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start a thread: {e}"))
}

/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`.
pub(crate) fn sleep_until(deadline_ns: u64) {
    let now = monotonic_ns();
    if deadline_ns > now {
        std::thread::sleep(Duration::from_nanos(deadline_ns - now));
    }
}
