//! Renders engine events: a progress bar on a terminal, plain lines otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use vernier_analysis::min_runs_for_verdict;
use vernier_app::{Notice, Observer};
use vernier_engine::stopping::{Precision, SettingsWarning};
use vernier_engine::Event;
use vernier_model::CONFIDENCE_LEVEL;
use vernier_report::format::{pct, plural, sig};
use vernier_report::units::duration_s;

/// How progress is shown, and what the session's end says once.
pub struct Progress {
    view: View,
    /// The configurations whose `--max-time` allowed fewer runs than a comparison needs for a
    /// verdict, each with the `--max-time` that would allow them (seconds).
    short: Vec<f64>,
}

enum View {
    Bar { bar: ProgressBar, total: usize },
    Lines,
    Quiet,
}

/// The fewest runs a side with which `compare` can give a verdict on sessions of this
/// vernier (their intervals are at [`CONFIDENCE_LEVEL`]).
fn verdict_runs() -> usize {
    min_runs_for_verdict(CONFIDENCE_LEVEL)
}

/// The `--max-time` that `runs` runs of a configuration would need, from the warning that its
/// first runs gave: what `min_runs` needs, less the runs between them.
fn max_time_for(runs: usize, min_runs: u32, mean_run_s: f64, needed_s: f64) -> f64 {
    (needed_s - mean_run_s * (f64::from(min_runs) - runs as f64)).ceil()
}

/// When a configuration's budget leaves fewer runs than a verdict needs: the `--max-time` that
/// would allow them.
fn verdict_shortfall(warning: &SettingsWarning) -> Option<f64> {
    match *warning {
        SettingsWarning::MinRunsExceedMaxTime {
            min_runs,
            mean_run_s,
            needed_s,
            budget,
            ..
        } if budget < verdict_runs() => {
            Some(max_time_for(verdict_runs(), min_runs, mean_run_s, needed_s))
        }
        _ => None,
    }
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
    let text = match (warning, verdict_shortfall(warning)) {
        (
            SettingsWarning::MinRunsExceedMaxTime {
                mean_run_s,
                max_time_s,
                budget,
                ..
            },
            Some(would),
        ) => format!(
            "--max-time {} allows about {} at {} s a run (setup waits included): a comparison \
             needs {} runs a side to give a verdict; --max-time {} would allow them",
            seconds(*max_time_s),
            plural(*budget, "run"),
            sig(*mean_run_s, 3),
            verdict_runs(),
            seconds(would)
        ),
        (
            SettingsWarning::MaxRunsBelowInterval { max_runs, .. }
            | SettingsWarning::MaxRunsBelowModality { max_runs, .. },
            _,
        ) if (*max_runs as usize) < verdict_runs() => format!(
            "{warning}, and compare needs {} runs a side to give a verdict",
            verdict_runs()
        ),
        _ => warning.to_string(),
    };
    match position {
        Some(p) => format!("warning: [{}] {text}", p + 1),
        None => format!("warning: {text}"),
    }
}

/// Seconds as `--max-time` takes them: `25s`, `1m45s`.
fn seconds(s: f64) -> String {
    let s = s.ceil().max(0.0) as u64;
    match (s / 60, s % 60) {
        (0, sec) => format!("{sec}s"),
        (min, 0) => format!("{min}m"),
        (min, sec) => format!("{min}m{sec}s"),
    }
}

/// The line said once at the session's end when some configurations had too little time for
/// a verdict.
fn shortfall_note(short: &[f64], configurations: Option<usize>) -> Option<String> {
    let most = short
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))))?;
    let of = configurations
        .map(|c| format!(" of {c}"))
        .unwrap_or_default();
    Some(format!(
        "note: {}{of} had too little --max-time for the {} runs a side that compare needs to \
         give a verdict; --max-time {} would allow them all (docs/statistics.md)",
        plural(short.len(), "configuration"),
        verdict_runs(),
        seconds(most)
    ))
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let view = if quiet {
            View::Quiet
        } else if std::io::stdout().is_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:.bold} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            // No steady tick: a redraw thread waking every 200 ms during a measured run is
            // foreign CPU in the run's contamination signal. The bar redraws on events only.
            View::Bar { bar, total: 0 }
        } else {
            View::Lines
        };
        Progress {
            view,
            short: Vec::new(),
        }
    }

    pub fn handle(&mut self, event: &Event) {
        if let Event::Warning { warning, .. } = event {
            self.short.extend(verdict_shortfall(warning));
        }
        if let Event::SessionFinished { .. } = event {
            let total = match &self.view {
                View::Bar { total, .. } => Some(*total),
                _ => None,
            };
            if let Some(note) = shortfall_note(&self.short, total) {
                if let View::Bar { bar, .. } = &self.view {
                    bar.println(&note);
                } else {
                    eprintln!("{note}");
                }
            }
        }
        match &mut self.view {
            View::Quiet => {
                // Conflicting bounds and a changed setup matter even without progress output.
                if matches!(event, Event::Warning { .. } | Event::SetupChanged { .. }) {
                    if let Some(line) = line(event) {
                        eprintln!("{line}");
                    }
                }
            }
            View::Lines => {
                if let Some(line) = line(event) {
                    // Progress is best effort: when its reader has gone (`| head`), the
                    // session goes on quietly and the summary's write reports the pipe.
                    if crate::out::write_fmt(format_args!("{line}\n")).is_err() {
                        self.view = View::Quiet;
                    }
                }
            }
            View::Bar { bar, total } => match event {
                Event::SessionStarted { configurations, .. } => *total = *configurations,
                Event::ConfigurationStarted { position, label } => {
                    bar.set_prefix(format!("[{}/{}] {label}", position + 1, total));
                    bar.set_message("");
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
                    // Replaced by RunStarted as soon as the setup is done: this stays only
                    // while an idle gate or a cooldown waits.
                    bar.set_message(format!(
                        "run {}: waiting for the setup before it (idle gate, cooldown)",
                        index + 1
                    ));
                }
                Event::RunStarted {
                    warmup,
                    index,
                    eta_s,
                    ..
                } => bar.set_message(started_text(*warmup, *index, *eta_s)),
                Event::ConfigurationFinished { .. }
                | Event::Warning { .. }
                | Event::SetupChanged { .. } => {
                    if let Some(line) = line(event) {
                        bar.println(line);
                    }
                }
                Event::SessionFinished { .. } => bar.finish_and_clear(),
            },
        }
    }
}

/// What the bar says while a run is in progress.
fn started_text(warmup: bool, index: u32, eta_s: Option<f64>) -> String {
    let what = if warmup {
        format!("warmup {} running (discarded)", index + 1)
    } else {
        format!("run {} running", index + 1)
    };
    match eta_s {
        Some(eta) => format!("{what}  ETA {}", duration_s(eta)),
        None => format!("{what}  ETA after the first run"),
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
    }
}

/// The plain-text line of an event, if it has one.
fn line(event: &Event) -> Option<String> {
    match event {
        Event::SessionStarted {
            session,
            configurations,
        } => Some(format!(
            "session {session}: {}",
            plural(*configurations, "configuration")
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
        Event::RunPreparing { .. } | Event::RunStarted { .. } => None,
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
            metric,
            unit,
            error,
            reachable,
            ..
        } => Some(match error {
            Some(e) => format!("[{}] {label}: failed: {e}", position + 1),
            None => format!(
                "[{}] {label}: {}, {metric} {} {unit} (median of the runs), {} ({reason}{})",
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
    fn a_budget_too_short_for_a_verdict_says_the_budget_that_would_do() {
        // hackbench at 12.3 s a run under --max-time 25: one run, where compare needs 4.
        let warning = SettingsWarning::MinRunsExceedMaxTime {
            min_runs: 6,
            mean_run_s: 12.3,
            needed_s: 12.3 * 7.0,
            max_time_s: 25.0,
            budget: 1,
        };
        let w = line(&Event::Warning {
            position: Some(0),
            warning,
        })
        .unwrap();
        assert_eq!(verdict_runs(), 4);
        assert!(
            w.starts_with("warning: [1] --max-time 25s allows about 1 run at 12.3 s a run"),
            "{w}"
        );
        // Warmup and 4 runs: 5 x 12.3 = 61.5 s.
        assert!(
            w.contains("needs 4 runs a side to give a verdict; --max-time 1m2s would"),
            "{w}"
        );
        // Enough for a verdict but not for --min-runs: the plain warning.
        let enough = SettingsWarning::MinRunsExceedMaxTime {
            min_runs: 6,
            mean_run_s: 5.0,
            needed_s: 35.0,
            max_time_s: 25.0,
            budget: 4,
        };
        assert_eq!(verdict_shortfall(&enough), None);
        let mut progress = Progress {
            view: View::Quiet,
            short: Vec::new(),
        };
        for (budget, needed_s) in [(1, 86.1), (3, 36.0)] {
            progress.handle(&Event::Warning {
                position: None,
                warning: SettingsWarning::MinRunsExceedMaxTime {
                    min_runs: 6,
                    mean_run_s: 5.0,
                    needed_s,
                    max_time_s: 25.0,
                    budget,
                },
            });
        }
        progress.handle(&Event::Warning {
            position: None,
            warning: enough,
        });
        let note = shortfall_note(&progress.short, Some(8)).unwrap();
        assert!(
            note.starts_with("note: 2 configurations of 8 had too little --max-time"),
            "{note}"
        );
        assert!(
            note.contains("--max-time 1m17s would allow them all"),
            "{note}"
        );
        assert_eq!(shortfall_note(&[], Some(8)), None);
    }

    #[test]
    fn max_runs_below_a_verdict_says_so_at_plan_time() {
        let w = warning_text(
            None,
            &SettingsWarning::MaxRunsBelowInterval {
                max_runs: 3,
                needed: 8,
            },
        );
        assert!(
            w.ends_with("can converge, and compare needs 4 runs a side to give a verdict"),
            "{w}"
        );
    }

    #[test]
    fn a_run_in_progress_says_what_runs_and_the_time_left_with_it() {
        assert_eq!(
            started_text(true, 0, None),
            "warmup 1 running (discarded)  ETA after the first run"
        );
        assert_eq!(
            started_text(false, 2, Some(61.0)),
            "run 3 running  ETA 1 min 01 s"
        );
        assert_eq!(seconds(25.0), "25s");
        assert_eq!(seconds(120.0), "2m");
        assert_eq!(seconds(61.5), "1m2s");
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
            metric: "forks".into(),
            unit: "forks/s".into(),
            error: None,
        })
        .unwrap();
        assert!(
            finished.contains("(unreachable: the target is out of reach"),
            "{finished}"
        );
        assert!(finished.contains("±5"), "{finished}");
        assert!(
            finished.contains("12 runs, forks 100.0 forks/s (median of the runs)"),
            "{finished}"
        );
    }
}
