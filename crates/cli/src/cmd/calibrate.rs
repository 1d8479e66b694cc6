//! `vernier calibrate [SPEC...]`: short A/A sessions of the same configurations, one after the
//! other, to measure how much whole sessions differ on this machine beyond what their runs
//! explain (`vernier_app::calibrate`); `compare` widens the interval of one session a side by
//! the stored estimate (docs/compare.md, "Sessions").

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_app::calibrate::{calibrate as run_calibration, CalibrationEnd, CalibrationRequest};
use vernier_app::exit_status_after;

use crate::cli::CalibrateArgs;
use crate::db;
use crate::out::{out, outln};
use crate::progress::Progress;

pub fn calibrate(args: CalibrateArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let request = CalibrationRequest {
        specs: args.specs,
        suite: args.suite,
        sessions: args.sessions,
        runs: args.runs,
        warmup: args.warmup,
        max_time_s: args.max_time,
        spread_s: args.spread,
        setup: args.setup,
    };
    let database = db::location(db_arg)?;
    let mut signals = crate::session::signals();
    // The sessions' own progress is not shown, only their warnings.
    let mut progress = Progress::new(true);
    let calibration = match run_calibration(&request, &database, &mut signals, &mut progress)? {
        CalibrationEnd::Stored(calibration) => calibration,
        CalibrationEnd::Interrupted {
            signal,
            tag,
            in_session,
        } => {
            if in_session {
                eprintln!("interrupted: the completed runs are stored");
            }
            eprintln!(
                "interrupted: no calibration stored (the finished sessions are kept, tag {tag})"
            );
            return Ok(ExitCode::from(exit_status_after(signal)));
        }
    };
    out!(
        "{}",
        vernier_report::calibration::table(&calibration.calibrations)
    );
    for note in &calibration.notes {
        outln!("note: {note}");
    }
    if calibration.back_to_back {
        // docs/compare.md: adjacent sessions agree better than sessions minutes apart.
        outln!(
            "note: the sessions ran back to back; noise between sessions further apart is not \
             seen (--spread SECONDS spaces them, e.g. --spread 600)"
        );
    }
    let mut fingerprints: Vec<&str> = calibration
        .calibrations
        .iter()
        .map(|c| c.fingerprint.as_str())
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    outln!(
        "calibration {} of environment {} ({} sessions, tag {}) stored in {}",
        calibration.id,
        fingerprints.join(", "),
        calibration.sessions,
        calibration.tag,
        calibration.location
    );
    Ok(ExitCode::SUCCESS)
}
