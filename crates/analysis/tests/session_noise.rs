//! `compare` with session-to-session noise: several sessions a side estimate it, a stored
//! calibration supplies it for one session a side, and without either the report says so.

#![allow(clippy::unwrap_used)]

use uuid::Uuid;
use vernier_analysis::{
    compare, compare_calibrated, CompareReport, CompareSettings, Comparison, NoiseSource, Verdict,
};
use vernier_model::{Calibration, Options, StoredSession};

/// A session of one configuration (testkit's `command`, time in s) whose runs took `values`,
/// in the environment of `fingerprint`.
fn session(fingerprint: &str, values: &[f64]) -> StoredSession {
    let mut session = vernier_testkit::stored_session(0, values);
    session.info.fingerprint = fingerprint.into();
    session
}

fn calibration(fingerprint: &str, between_sd: f64) -> Calibration {
    Calibration {
        id: Uuid::new_v4(),
        created_at_ns: 1,
        fingerprint: fingerprint.into(),
        benchmark: "command".into(),
        options: Options::default(),
        metric: "time".into(),
        sessions: 5,
        runs: 50,
        // Consistent as `vernier calibrate` stores it: session SD^2 = within^2 + between^2.
        session_sd: (between_sd * between_sd + 0.001 * 0.001).sqrt(),
        within_sd: 0.001,
        between_sd,
        df: 4.0,
        session_ids: Vec::new(),
    }
}

/// Twelve tight runs around `center` (spread about 0.5%).
fn runs(center: f64) -> Vec<f64> {
    [
        1.000, 1.002, 0.998, 1.004, 0.996, 1.001, 0.999, 1.003, 0.997, 1.005, 0.995, 1.0005,
    ]
    .iter()
    .map(|v| v * center)
    .collect()
}

fn only(mut r: CompareReport) -> (Comparison, Vec<String>) {
    assert_eq!(r.comparisons.len(), 1);
    (
        r.comparisons.remove(0),
        r.summary.warnings.iter().map(ToString::to_string).collect(),
    )
}

#[test]
fn without_calibration_the_interval_is_the_runs_and_the_report_says_so() {
    let (c, notes) = only(
        compare(
            &[session("fa", &runs(1.0))],
            &[session("fb", &runs(1.05))],
            &CompareSettings::default(),
        )
        .unwrap(),
    );
    assert_eq!(
        (c.ratio_ci_low, c.ratio_ci_high),
        (c.runs_ci_low, c.runs_ci_high)
    );
    assert_eq!(c.noise_source, None);
    assert_eq!(c.session_noise, None);
    assert_eq!((c.base_sessions, c.new_sessions), (1, 1));
    assert_eq!(c.verdict, Verdict::Slower);
    let mdc = c.mdc.unwrap();
    assert!(mdc > 0.02 && mdc < 0.05, "{mdc}");
    let calibration_notes: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("no calibration"))
        .collect();
    assert_eq!(calibration_notes.len(), 1, "{notes:?}");
    assert!(calibration_notes[0].contains("fa, fb"), "{notes:?}");
}

#[test]
fn a_calibration_widens_a_single_session_interval() {
    let base = [session("fa", &runs(1.0))];
    let new = [session("fb", &runs(1.05))];
    // Sessions of this configuration wander by 3% (log SD): a 5% difference between two
    // single sessions is no longer a verdict.
    let (c, notes) = only(
        compare_calibrated(
            &base,
            &new,
            &CompareSettings::default(),
            &[calibration("fa", 0.03)],
        )
        .unwrap(),
    );
    assert_eq!(c.noise_source, Some(NoiseSource::Calibration));
    // Both sides borrow fa's calibration: sqrt(2) * 0.03.
    assert!((c.session_noise.unwrap() - 0.03 * 2f64.sqrt()).abs() < 1e-12);
    let (lo, hi) = (c.ratio_ci_low.unwrap(), c.ratio_ci_high.unwrap());
    assert!(lo < c.runs_ci_low.unwrap() && hi > c.runs_ci_high.unwrap());
    // t with about 4 df times sqrt(2 * 0.03^2 + runs part): more than 0.11 on the log scale.
    assert!(hi.ln() - c.ratio.ln() > 0.11, "[{lo}, {hi}]");
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(c.mdc.unwrap() > 0.15, "{:?}", c.mdc);
    assert!(
        !notes.iter().any(|n| n.contains("no calibration")),
        "{notes:?}"
    );

    // A calibration of another environment does not apply.
    let (c, notes) = only(
        compare_calibrated(
            &base,
            &new,
            &CompareSettings::default(),
            &[calibration("elsewhere", 0.03)],
        )
        .unwrap(),
    );
    assert_eq!(c.noise_source, None);
    assert_eq!(c.verdict, Verdict::Slower);
    assert!(notes.iter().any(|n| n.contains("no calibration")));

    // A calibration that found no noise beyond the runs leaves the interval as it was.
    let (c, _) = only(
        compare_calibrated(
            &base,
            &new,
            &CompareSettings::default(),
            &[calibration("fb", 0.0)],
        )
        .unwrap(),
    );
    assert_eq!(c.noise_source, Some(NoiseSource::Calibration));
    assert_eq!(
        (c.ratio_ci_low, c.ratio_ci_high),
        (c.runs_ci_low, c.runs_ci_high)
    );
}

#[test]
fn several_sessions_a_side_are_the_replication_unit() {
    // Each side's sessions shift as a whole by a few percent: pooled run by run, 36 tight
    // runs a side give a narrow interval; the sessions show the shifts.
    let base: Vec<StoredSession> = [1.0, 1.04, 0.97]
        .iter()
        .map(|s| session("f", &runs(*s)))
        .collect();
    let new: Vec<StoredSession> = [1.03, 0.98, 1.01]
        .iter()
        .map(|s| session("f", &runs(*s)))
        .collect();
    let (c, notes) = only(
        compare_calibrated(
            &base,
            &new,
            &CompareSettings::default(),
            &[calibration("f", 0.0)],
        )
        .unwrap(),
    );
    assert_eq!(c.noise_source, Some(NoiseSource::Sessions));
    assert_eq!((c.base_sessions, c.new_sessions), (3, 3));
    // By hand: the pooled variance of the session log-medians over 3 + 3 - 2 = 4 df, times
    // 1/3 + 1/3, is an upper bound; the within part subtracted (Maritz-Jarrett of the tight
    // runs) is small.
    let ln = |v: f64| v.ln();
    let b = [ln(1.0), ln(1.04), ln(0.97)];
    let n = [ln(1.03), ln(0.98), ln(1.01)];
    let ss = |xs: &[f64]| {
        let m = xs.iter().sum::<f64>() / 3.0;
        xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let mean_square = (ss(&b) + ss(&n)) / 4.0;
    let noise = c.session_noise.unwrap();
    let upper = (mean_square * 2.0 / 3.0).sqrt();
    assert!(noise < upper && noise > 0.95 * upper, "{noise} vs {upper}");
    let (lo, hi) = (c.ratio_ci_low.unwrap(), c.ratio_ci_high.unwrap());
    assert!(lo < c.runs_ci_low.unwrap() && hi > c.runs_ci_high.unwrap());
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(
        !notes.iter().any(|n| n.contains("no calibration")),
        "{notes:?}"
    );
}
