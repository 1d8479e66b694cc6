//! Renders engine events: a progress bar on a terminal, plain lines otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use vernier_app::{Notice, Observer};
use vernier_engine::stopping::{Precision, SettingsWarning};
use vernier_engine::Event;
use vernier_report::format::{pct, plural, sig};
use vernier_report::units::duration_s;

/// How progress is shown.
pub enum Progress {
    Bar { bar: ProgressBar, total: usize },
    Lines,
    Quiet,
}

fn precision_text(p: &Precision, target: f64) -> String {
    match p.relative_half_width {
        Some(w) => format!("CI ±{} (target {})", pct(w), pct(target)),
        None => format!("no CI yet (target {})", pct(target)),
    }
}

/// Setup waits (idle gate, cooldown), when there were any: this run's and the configuration's.
fn waits_text(waited_s: f64, waits_s: f64) -> String {
    if waits_s > 0.0 {
        format!(
            "  waited {} (setup waits {})",
            duration_s(waited_s),
            duration_s(waits_s)
        )
    } else {
        String::new()
    }
}

fn warning_text(position: Option<usize>, warning: &SettingsWarning) -> String {
    match position {
        Some(p) => format!("warning: [{}] {warning}", p + 1),
        None => format!("warning: {warning}"),
    }
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        if quiet {
            Progress::Quiet
        } else if std::io::stdout().is_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:.bold} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            // No steady tick: a redraw thread waking every 200 ms during a measured run is
            // foreign CPU in the run's contamination signal. The bar redraws on events only.
            Progress::Bar { bar, total: 0 }
        } else {
            Progress::Lines
        }
    }

    pub fn handle(&mut self, event: &Event) {
        match self {
            Progress::Quiet => {
                // Conflicting bounds and a changed setup matter even without progress output.
                if matches!(event, Event::Warning { .. } | Event::SetupChanged { .. }) {
                    if let Some(line) = line(event) {
                        eprintln!("{line}");
                    }
                }
            }
            Progress::Lines => {
                if let Some(line) = line(event) {
                    // Progress is best effort: when its reader has gone (`| head`), the
                    // session goes on quietly and the summary's write reports the pipe.
                    if crate::out::write_fmt(format_args!("{line}\n")).is_err() {
                        *self = Progress::Quiet;
                    }
                }
            }
            Progress::Bar { bar, total } => match event {
                Event::SessionStarted { configurations, .. } => *total = *configurations,
                Event::ConfigurationStarted { position, label } => {
                    bar.set_prefix(format!("[{}/{}] {label}", position + 1, total));
                    bar.set_message("starting");
                }
                Event::RunFinished {
                    position,
                    label,
                    warmup,
                    index,
                    value,
                    unit,
                    precision,
                    target,
                    waited_s,
                    waits_s,
                    eta_s,
                } => {
                    bar.set_prefix(format!("[{}/{}] {label}", position + 1, total));
                    let kind = if *warmup { "warmup" } else { "run" };
                    bar.set_message(format!(
                        "{kind} {}: {} {unit}  {}{}  ETA {}",
                        index + 1,
                        sig(*value, 4),
                        precision_text(precision, *target),
                        waits_text(*waited_s, *waits_s),
                        duration_s(*eta_s)
                    ));
                }
                Event::Preparing { .. } => {
                    bar.set_message("preparing the work directory (once per session)");
                }
                Event::RunPreparing { index, .. } => {
                    bar.set_message(format!(
                        "run {}: setup before the run (idle gate, cooldown may wait)",
                        index + 1
                    ));
                }
                Event::ConfigurationFinished { .. }
                | Event::Warning { .. }
                | Event::SetupChanged { .. }
                | Event::ProfileFinished { .. }
                | Event::ProfileFailed { .. } => {
                    if let Some(line) = line(event) {
                        bar.println(line);
                    }
                }
                Event::SessionFinished { .. } => bar.finish_and_clear(),
            },
        }
    }
}

/// A session's progress: the engine's events as above, the application layer's notices as
/// lines on stderr, whatever the progress shows.
impl Observer for Progress {
    fn event(&mut self, event: &Event) {
        self.handle(event);
    }

    fn notice(&mut self, notice: &Notice) {
        eprintln!("{}", notice_line(notice));
    }
}

fn notice_line(notice: &Notice) -> String {
    match notice {
        Notice::SetupSkipped(skipped) => format!(
            "note: optional setup '{}' skipped: {}",
            skipped.plugin, skipped.reason
        ),
        Notice::CalibrationWaits {
            index,
            sessions,
            wait,
        } => format!(
            "calibrate: session {index} of {sessions} starts in {:.0} s",
            wait.as_secs_f64()
        ),
        Notice::CalibrationSession { index, sessions } => {
            format!("calibrate: session {index} of {sessions}")
        }
        Notice::Profile(note) => format!("note: --profile: {note}"),
    }
}

/// The plain-text line of an event, if it has one.
fn line(event: &Event) -> Option<String> {
    match event {
        Event::SessionStarted {
            session,
            configurations,
        } => Some(format!(
            "session {session}: {configurations} configuration(s)"
        )),
        Event::ConfigurationStarted { position, label } => {
            Some(format!("[{}] {label}", position + 1))
        }
        Event::Warning { position, warning } => Some(warning_text(*position, warning)),
        Event::SetupChanged {
            position,
            label,
            index,
            when,
            changes,
        } => {
            let list: Vec<String> = changes.iter().map(ToString::to_string).collect();
            Some(format!(
                "warning: [{}] {label}: something else changed the setup, found {when} run {}: \
                 {}; the runs measured so are marked (setup_changed)",
                position + 1,
                index + 1,
                list.join("; ")
            ))
        }
        Event::RunPreparing { .. } => None,
        Event::ProfileFinished {
            position,
            label,
            index,
            runs,
            event,
            distinct_stacks,
            overhead,
        } => Some(format!(
            "[{}] {label}: profiled run {} of {runs} ({event}): {} distinct stacks{}",
            position + 1,
            index + 1,
            distinct_stacks,
            overhead
                .map(|o| format!(", {o:.2}x the timed runs' mean time"))
                .unwrap_or_default()
        )),
        Event::ProfileFailed {
            position,
            label,
            index,
            error,
        } => Some(format!(
            "warning: [{}] {label}: profiled run {} failed: {error}",
            position + 1,
            index + 1
        )),
        Event::Preparing { position, .. } => Some(format!(
            "[{}] preparing the work directory (once per session)",
            position + 1
        )),
        Event::RunFinished {
            position,
            warmup,
            index,
            value,
            unit,
            precision,
            target,
            waited_s,
            waits_s,
            eta_s,
            ..
        } => Some(format!(
            "[{}] {} {}: {} {unit}  {}{}  ETA {}",
            position + 1,
            if *warmup { "warmup" } else { "run" },
            index + 1,
            sig(*value, 4),
            precision_text(precision, *target),
            waits_text(*waited_s, *waits_s),
            duration_s(*eta_s)
        )),
        Event::ConfigurationFinished {
            position,
            label,
            reason,
            precision,
            unit,
            error,
            reachable,
            ..
        } => Some(match error {
            Some(e) => format!("[{}] {label}: failed: {e}", position + 1),
            None => format!(
                "[{}] {label}: {}, median {} {unit}, {} ({reason}{})",
                position + 1,
                plural(precision.n, "run"),
                precision
                    .median
                    .map(|m| sig(m, 4))
                    .unwrap_or_else(|| "-".into()),
                precision
                    .relative_half_width
                    .map(|w| format!("CI ±{}", pct(w)))
                    .unwrap_or_else(|| "no CI".into()),
                reachable
                    .map(|r| format!(
                        ": the target is out of reach, the budget reaches about ±{}",
                        pct(r)
                    ))
                    .unwrap_or_default(),
            ),
        }),
        Event::SessionFinished { status, .. } => Some(format!("session {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_finished(waited_s: f64, waits_s: f64, eta_s: f64) -> Event {
        Event::RunFinished {
            position: 0,
            label: "mock".into(),
            warmup: false,
            index: 4,
            value: 1.5,
            unit: "s".into(),
            precision: Precision {
                n: 5,
                median: Some(1.5),
                ci: None,
                relative_half_width: None,
            },
            target: 0.02,
            waited_s,
            waits_s,
            eta_s,
        }
    }

    #[test]
    fn run_lines_show_setup_waits_and_the_eta() {
        let quiet = line(&run_finished(0.0, 0.0, 12.0)).unwrap();
        assert!(!quiet.contains("waited"), "{quiet}");
        assert!(quiet.contains("ETA"), "{quiet}");
        let waiting = line(&run_finished(60.0, 300.0, 120.0)).unwrap();
        assert!(waiting.contains("waited 1 min 00 s"), "{waiting}");
        assert!(waiting.contains("(setup waits 5 min 00 s)"), "{waiting}");
        assert!(waiting.contains("ETA 2 min 00 s"), "{waiting}");
    }

    #[test]
    fn warnings_and_unreachable_stops_are_explained() {
        let warning = SettingsWarning::MaxRunsBelowInterval {
            max_runs: 6,
            needed: 8,
        };
        let w = line(&Event::Warning {
            position: Some(1),
            warning: warning.clone(),
        })
        .unwrap();
        assert_eq!(w, format!("warning: [2] {warning}"));
        assert!(
            w.starts_with("warning: [2] --max-runs 6 is below the 8 runs"),
            "{w}"
        );
        let finished = line(&Event::ConfigurationFinished {
            position: 0,
            label: "fork".into(),
            reason: vernier_model::StopReason::Unreachable,
            converged: false,
            reachable: Some(0.05),
            precision: Precision {
                n: 12,
                median: Some(100.0),
                ci: None,
                relative_half_width: Some(0.1),
            },
            unit: "forks/s".into(),
            error: None,
        })
        .unwrap();
        assert!(
            finished.contains("(unreachable: the target is out of reach"),
            "{finished}"
        );
        assert!(finished.contains("±5"), "{finished}");
    }
}
