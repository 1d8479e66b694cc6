//! Renders engine events: a progress bar on a terminal, plain lines otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use vernier_engine::stopping::Precision;
use vernier_engine::Event;
use vernier_report::format::{duration_s, pct, sig};

/// How progress is shown.
pub enum Progress {
    Bar { bar: ProgressBar, total: usize },
    Lines,
    Quiet,
}

fn precision_text(p: &Precision, target: f64) -> String {
    match p.relative_half_width {
        Some(w) => format!("CI ±{} (target {})", pct(w), pct(target)),
        None => format!("CI needs 6 runs (target {})", pct(target)),
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
            Progress::Quiet => {}
            Progress::Lines => {
                if let Some(line) = line(event) {
                    println!("{line}");
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
                    eta_s,
                } => {
                    bar.set_prefix(format!("[{}/{}] {label}", position + 1, total));
                    let kind = if *warmup { "warmup" } else { "run" };
                    bar.set_message(format!(
                        "{kind} {}: {} {unit}  {}  ETA {}",
                        index + 1,
                        sig(*value, 4),
                        precision_text(precision, *target),
                        duration_s(*eta_s)
                    ));
                }
                Event::ConfigurationFinished { .. } => {
                    if let Some(line) = line(event) {
                        bar.println(line);
                    }
                }
                Event::SessionFinished { .. } => bar.finish_and_clear(),
            },
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
            "session {session}: {configurations} configuration(s)"
        )),
        Event::ConfigurationStarted { position, label } => {
            Some(format!("[{}] {label}", position + 1))
        }
        Event::RunFinished {
            position,
            warmup,
            index,
            value,
            unit,
            precision,
            target,
            eta_s,
            ..
        } => Some(format!(
            "[{}] {} {}: {} {unit}  {}  ETA {}",
            position + 1,
            if *warmup { "warmup" } else { "run" },
            index + 1,
            sig(*value, 4),
            precision_text(precision, *target),
            duration_s(*eta_s)
        )),
        Event::ConfigurationFinished {
            position,
            label,
            reason,
            precision,
            unit,
            error,
            ..
        } => Some(match error {
            Some(e) => format!("[{}] {label}: failed: {e}", position + 1),
            None => format!(
                "[{}] {label}: {} runs, median {} {unit}, {} ({reason})",
                position + 1,
                precision.n,
                precision
                    .median
                    .map(|m| sig(m, 4))
                    .unwrap_or_else(|| "-".into()),
                precision
                    .relative_half_width
                    .map(|w| format!("CI ±{}", pct(w)))
                    .unwrap_or_else(|| "no CI".into()),
            ),
        }),
        Event::SessionFinished { status, .. } => Some(format!("session {status}")),
    }
}
