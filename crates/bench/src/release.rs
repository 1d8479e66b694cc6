//! The safety net of a command spawned on its spawner's one CPU (`RunContext::release_cpus`).
//!
//! The spawner gives the command every CPU as soon as the spawn returns, which is when the
//! exec has replaced the child. On an idle CPU the spawner runs at once, before the new
//! program's first instruction; on a busy one the command may run first, for as long as the
//! scheduler lets it, and the threads and processes it starts meanwhile inherit the one CPU
//! and keep it. So a thread of its own, on the other CPUs, looks again once the command has
//! run [`RELEASE_CHECK`]: if it still runs, whatever the spawner started and everything they
//! started are given every CPU ([`vernier_sys::affinity::release_tree`]).
//!
//! The look is a timer (timerfd_create(2)) that the spawner arms before it starts its clock
//! and disarms after it has stopped it: a command that ends sooner (`true`, 0.6 ms) wakes
//! nothing and is timed as without the safety net.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use vernier_sys::affinity::{current_cpu, release_tree, CpuSet};
use vernier_sys::clock::monotonic_ns;

/// How long a command runs before the processes it started are looked for: short beside the
/// time of any command that starts others, and longer than `true` (0.6 ms on a 2-vCPU KVM
/// guest), whose spawns then end before the look.
pub(crate) const RELEASE_CHECK: Duration = Duration::from_millis(1);

/// The longest wait between two looks at a command that has started others: after the first
/// look the releaser looks again at doubling intervals (2, 4, ... ms) up to this, as long as the
/// command runs. A process forked while its parent was given every CPU copies the parent's one
/// CPU at the fork's start and appears in /proc only at its end, after the walk: beside
/// `stress-ng --cpu 4` a shell given every CPU at its spawn had a child that /proc listed only
/// after a second look 4.5 ms later, and that kept the one CPU (in one run of the test below in
/// 15 to 60, before these looks). A walk of a tree already released reads each of its
/// root's threads' children once: once a second, nothing beside the command's own time.
const LOOK_AGAIN_AT_MOST: Duration = Duration::from_secs(1);

/// The spawn the releaser looks after.
#[derive(Default)]
struct Spawn {
    /// The thread that spawns it (gettid(2)), whose children /proc lists.
    spawner: u32,
    /// The spawner's CPU, which the releaser keeps off when there are others.
    home: u64,
    /// CLOCK_MONOTONIC when the timer was armed, in nanoseconds; 0: the command has ended.
    armed_ns: u64,
    cpus: Vec<usize>,
}

struct Shared {
    spawn: Mutex<Spawn>,
    timer: OwnedFd,
}

/// A spawn the releaser looks after ([`Releaser::arm`]), until this is dropped once its
/// command has ended.
pub(crate) struct Armed(Arc<Shared>);

impl Drop for Armed {
    fn drop(&mut self) {
        // The timer is set under the lock, here as in `arm` and `look`, so that a look at an
        // earlier spawn never re-arms it over a later one.
        let mut spawn = lock(&self.0.spawn);
        spawn.armed_ns = 0;
        set_timer(&self.0.timer, Duration::ZERO);
    }
}

/// The releasing thread of this process, started at its first spawn.
pub(crate) struct Releaser(Arc<Shared>);

impl Releaser {
    /// This process's releaser; `None` when it has no timer or thread.
    pub(crate) fn get() -> Option<&'static Releaser> {
        static RELEASER: OnceLock<Option<Releaser>> = OnceLock::new();
        RELEASER.get_or_init(Releaser::start).as_ref()
    }

    fn start() -> Option<Releaser> {
        // SAFETY: timerfd_create takes a clock and flags and returns a new descriptor or -1.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a descriptor this process just got and nothing else owns.
        let timer = unsafe { OwnedFd::from_raw_fd(raw) };
        let shared = Arc::new(Shared {
            spawn: Mutex::new(Spawn::default()),
            timer,
        });
        let looker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("release".into())
            .spawn(move || look(&looker))
            .ok()?;
        Some(Releaser(shared))
    }

    /// Arms the look at the spawn the calling thread is about to make, of a command to be
    /// given `cpus`.
    pub(crate) fn arm(&self, cpus: &[usize]) -> Armed {
        let mut spawn = lock(&self.0.spawn);
        // SAFETY: gettid has no preconditions.
        spawn.spawner = u32::try_from(unsafe { libc::gettid() }).unwrap_or(0);
        spawn.home = current_cpu();
        spawn.cpus.clear();
        spawn.cpus.extend_from_slice(cpus);
        spawn.armed_ns = monotonic_ns();
        set_timer(&self.0.timer, RELEASE_CHECK);
        drop(spawn);
        Armed(Arc::clone(&self.0))
    }
}

fn lock(spawn: &Mutex<Spawn>) -> std::sync::MutexGuard<'_, Spawn> {
    spawn.lock().unwrap_or_else(|e| e.into_inner())
}

/// Arms `timer` to expire once after `after`; zero disarms it.
fn set_timer(timer: &OwnedFd, after: Duration) {
    let value = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: after.as_secs() as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        },
    };
    // SAFETY: a valid timerfd and itimerspec; the old value is not asked for.
    unsafe { libc::timerfd_settime(timer.as_raw_fd(), 0, &value, std::ptr::null_mut()) };
}

/// The releaser's loop: at each expiry of the timer, unless the command armed for has ended
/// (or a later spawn armed it anew and has not run `RELEASE_CHECK` yet), gives what the
/// spawner started, and theirs, every CPU; where the spawner has started nothing yet, it
/// looks again `RELEASE_CHECK` later, and after that at doubling intervals up to
/// [`LOOK_AGAIN_AT_MOST`] while the command runs.
fn look(shared: &Shared) {
    let mut placed_for = None;
    // The spawn looked at (its arming time) and the wait before the next look at it.
    let mut looking_at = 0;
    let mut interval = RELEASE_CHECK;
    loop {
        let mut expirations = [0u8; 8];
        // SAFETY: reads 8 bytes into a buffer of 8 from a valid descriptor.
        let n = unsafe {
            libc::read(
                shared.timer.as_raw_fd(),
                expirations.as_mut_ptr().cast(),
                expirations.len(),
            )
        };
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
        let (spawner, home, cpus, armed_ns) = {
            let spawn = lock(&shared.spawn);
            let ran = monotonic_ns().saturating_sub(spawn.armed_ns);
            if spawn.armed_ns == 0 || ran < RELEASE_CHECK.as_nanos() as u64 {
                continue;
            }
            (
                spawn.spawner,
                spawn.home,
                spawn.cpus.clone(),
                spawn.armed_ns,
            )
        };
        if armed_ns != looking_at {
            looking_at = armed_ns;
            interval = RELEASE_CHECK;
        }
        // Off the spawner's CPU, where the command runs.
        if placed_for != Some(home) {
            let others: Vec<usize> = cpus.iter().copied().filter(|&c| c as u64 != home).collect();
            let _ =
                CpuSet::new(if others.is_empty() { &cpus } else { &others }).pin_current_thread();
            placed_for = Some(home);
        }
        let children = format!("/proc/self/task/{spawner}/children");
        let children = std::fs::read_to_string(children).unwrap_or_default();
        let mut any = false;
        for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            let _ = release_tree(child, &cpus);
            any = true;
        }
        // A spawner kept from its spawn that long (a busy machine) has not spawned yet: the
        // next look comes RELEASE_CHECK later. Once it has, the next comes after twice the
        // last wait, at most LOOK_AGAIN_AT_MOST.
        if any {
            interval = (interval * 2).min(LOOK_AGAIN_AT_MOST);
        }
        let spawn = lock(&shared.spawn);
        if spawn.armed_ns == armed_ns {
            set_timer(&shared.timer, interval);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::BufRead;

    fn cpus_of(pid: u32) -> Vec<usize> {
        vernier_sys::affinity::affinity_of(pid).unwrap()
    }

    #[test]
    fn what_a_command_started_confined_gets_every_cpu_once_it_has_run_the_check() {
        let allowed = vernier_sys::affinity::current_affinity().unwrap();
        if allowed.len() < 2 || !vernier_sys::affinity::children_listed() {
            eprintln!("skipped: needs two CPUs and /proc/PID/task/TID/children");
            return;
        }
        // A releaser of this test's own (the process's one serves one spawner at a time).
        let releaser = Releaser::start().unwrap();
        let all = allowed.clone();
        // A spawner confined to one CPU that never gives its command more: a shell that
        // starts a child (sleep) at once. The spawner waits in its own thread, whose children
        // the releaser looks for.
        let (shell_cpus, sleep_cpus) = std::thread::spawn(move || {
            vernier_sys::affinity::pin_current_thread(&all[..1]).unwrap();
            let armed = releaser.arm(&all);
            // Kept from its spawn past the first look, as on a busy machine.
            std::thread::sleep(RELEASE_CHECK * 3);
            let mut shell = std::process::Command::new("sh")
                .args(["-c", "sleep 5 & echo $!; wait"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            std::io::BufReader::new(shell.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let sleep: u32 = line.trim().parse().unwrap();
            // The look comes RELEASE_CHECK after the arming; a busy machine may delay it.
            let deadline = std::time::Instant::now() + Duration::from_secs(4);
            while cpus_of(sleep) != all && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            let seen = (cpus_of(shell.id()), cpus_of(sleep));
            // SAFETY: kill(2) of the process this test started.
            unsafe { libc::kill(sleep as libc::pid_t, libc::SIGKILL) };
            shell.wait().unwrap();
            drop(armed);
            seen
        })
        .join()
        .unwrap();
        assert_eq!(shell_cpus, allowed);
        assert_eq!(sleep_cpus, allowed);
    }
}
