//! What a session tells the user: the signal thread's notices, and how the session ended (its
//! summary, where it is stored, and the exit status). Its progress is `progress.rs`'s.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use vernier_app::{exit_status_after, Ending, SessionEnd, SignalNotice, Signals};

use crate::out::outln;

/// The ending signals of this process, reported on stderr; they are received from the moment
/// a session may change the system (`Signals::watch`).
pub fn signals() -> Signals {
    // SAFETY: isatty(3) only inspects the descriptor.
    let terminals =
        [libc::STDOUT_FILENO, libc::STDERR_FILENO].map(|fd| (fd, unsafe { libc::isatty(fd) } == 1));
    Signals::new(move |notice| match notice {
        SignalNotice::First { signal, in_session } => {
            if signal == libc::SIGHUP {
                detach_from_terminal(&terminals);
            }
            if in_session {
                say(format!(
                    "\n{}: stopping after ending the run in progress (send it again to leave at \
                     once)",
                    signal_name(signal)
                ));
            }
        }
        SignalNotice::Leaving { signal } => say(format!(
            "{}: restoring the system and leaving at once",
            signal_name(signal)
        )),
        SignalNotice::CannotRemove { path, error } => {
            say(format!("error: cannot remove {}: {error}", path.display()))
        }
        SignalNotice::CannotRestore { error } => {
            say(format!("error: cannot restore the system: {error}"))
        }
        SignalNotice::CannotMarkInterrupted { session, error } => say(format!(
            "error: cannot mark session {session} interrupted: {error}"
        )),
    })
}

/// Prints how a session ended: its summary and where it is stored, or why it did not run;
/// returns the command's exit status.
pub fn print_end(end: SessionEnd) -> Result<ExitCode> {
    let ran = match end {
        SessionEnd::Skipped {
            session,
            reason,
            location,
        } => {
            outln!("skipped: {reason}; stored as session {session} in {location}");
            return Ok(ExitCode::SUCCESS);
        }
        SessionEnd::NotStarted { signal } => {
            eprintln!("interrupted while waiting for the machine: nothing was measured");
            return Ok(ExitCode::from(exit_status_after(signal)));
        }
        SessionEnd::Ran(ran) => ran,
    };
    outln!(
        "\n{}",
        vernier_report::table::run_summary_table(&ran.summaries, crate::out::terminal_width())
    );
    for s in &ran.summaries {
        if let Some(latency) = &s.latency {
            outln!(
                "{}: latency per CPU\n{}",
                s.label(),
                vernier_report::latency::latency_text(latency)
            );
        }
    }
    outln!(
        "session {} ({}), stored in {}",
        ran.session,
        ran.status,
        ran.location
    );
    match ran.ending {
        Ending::Completed => Ok(ExitCode::SUCCESS),
        Ending::Ended => {
            eprintln!("ended: the completed intervals are stored");
            Ok(ExitCode::SUCCESS)
        }
        Ending::Interrupted { signal } => {
            eprintln!("interrupted: the completed runs are stored");
            Ok(ExitCode::from(exit_status_after(signal)))
        }
        Ending::TimedOut { limit_s } => {
            eprintln!(
                "stopped: the session ran past its time limit of {} (--time-limit); the \
                 completed runs are stored, with a time-limit finding",
                vernier_report::units::duration_s(limit_s)
            );
            Ok(ExitCode::from(2))
        }
        Ending::Failed { failures } => {
            for (label, error) in &failures {
                eprintln!("error: {label}: {error}");
            }
            Ok(ExitCode::from(2))
        }
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "interrupt (SIGINT)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "hangup (SIGHUP)",
        _ => "signal",
    }
}

/// Writes a line to stderr from a thread of its own: a write to a terminal that is stopped
/// (Ctrl-S) or to a pipe nobody reads blocks, and the signal thread must stay free to act on
/// the next signal and to restore the system. When stderr is gone (a closed terminal), there is
/// no one to tell, and the error is dropped.
fn say(line: String) {
    let _ = std::thread::Builder::new()
        .name("signal message".into())
        .spawn(move || {
            let _ = writeln!(std::io::stderr(), "{line}");
        });
}

/// After SIGHUP the terminal is gone and writing to it fails (EIO): what went to it goes to
/// /dev/null instead, so the session can still end in order. Pipes and files are kept.
fn detach_from_terminal(terminals: &[(i32, bool)]) {
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    for &(fd, was_terminal) in terminals {
        if was_terminal {
            // SAFETY: dup2(2) on two open descriptors; `fd` is stdout or stderr.
            unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), fd) };
        }
    }
}
