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
fn without_calibration_the_default_session_noise_applies_and_the_report_says_so() {
    let (c, notes) = only(
        compare(
            &[session("fa", &runs(1.0))],
            &[session("fb", &runs(1.05))],
            &CompareSettings::default(),
        )
        .unwrap(),
    );
    // Two sessions measured at different times differ by more than their runs show; without
    // a calibration the verdict assumes the default session noise (docs/compare.md) instead
    // of none, which once made 51% of A/A verdicts false at a session noise of 3%.
    assert_eq!(c.noise_source, Some(NoiseSource::Default));
    let noise = vernier_analysis::DEFAULT_SESSION_NOISE * 2f64.sqrt();
    assert!((c.session_noise.unwrap() - noise).abs() < 1e-15);
    assert_eq!(c.ratio_df, None, "a known variance: the normal quantile");
    let (lo, hi) = (c.ratio_ci_low.unwrap(), c.ratio_ci_high.unwrap());
    // The runs' half-widths (about 0.3%) and 1.96 sqrt(2) 5% = 13.9% in quadrature.
    assert!(
        hi.ln() - c.ratio.ln() > 0.138 && c.ratio.ln() - lo.ln() > 0.138,
        "[{lo}, {hi}]"
    );
    assert_eq!((c.base_sessions, c.new_sessions), (1, 1));
    assert_eq!(c.verdict, Verdict::Inconclusive);
    // ln(1.02) + (z_0.975 + z_0.8) sqrt(se^2 + 2 0.05^2): about 24%.
    let mdc = c.mdc.unwrap();
    assert!(mdc > 0.22 && mdc < 0.26, "{mdc}");
    let calibration_notes: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("no calibration"))
        .collect();
    assert_eq!(calibration_notes.len(), 1, "{notes:?}");
    assert!(calibration_notes[0].contains("fa, fb"), "{notes:?}");
    assert!(
        calibration_notes[0].contains("assume a session-to-session noise of 5.0%"),
        "{notes:?}"
    );
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
    assert!(c.ratio_df.unwrap() < 5.0, "{:?}", c.ratio_df);
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(c.mdc.unwrap() > 0.15, "{:?}", c.mdc);
    assert!(
        !notes.iter().any(|n| n.contains("no calibration")),
        "{notes:?}"
    );

    // A calibration of another environment does not apply: the default does.
    let (c, notes) = only(
        compare_calibrated(
            &base,
            &new,
            &CompareSettings::default(),
            &[calibration("elsewhere", 0.03)],
        )
        .unwrap(),
    );
    assert_eq!(c.noise_source, Some(NoiseSource::Default));
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(notes.iter().any(|n| n.contains("no calibration")));

    // A calibration that found no noise beyond the runs: no session noise added, only the
    // uncertainty of that finding (its mean square has 4 degrees of freedom); the 5% change
    // stays a verdict.
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
    assert_eq!(c.session_noise, Some(0.0));
    let (lo, hi) = (c.ratio_ci_low.unwrap(), c.ratio_ci_high.unwrap());
    let (rlo, rhi) = (c.runs_ci_low.unwrap(), c.runs_ci_high.unwrap());
    assert!(lo <= rlo && hi >= rhi, "[{lo}, {hi}] [{rlo}, {rhi}]");
    assert!(
        hi.ln() - lo.ln() < 2.0 * (rhi.ln() - rlo.ln()),
        "[{lo}, {hi}]"
    );
    assert_eq!(c.verdict, Verdict::Slower);
}

#[test]
fn several_sessions_a_side_are_the_replication_unit() {
    // Each side's sessions shift as a whole by a few percent: pooled run by run, 36 tight
    // runs a side give a narrow interval; the sessions show the shifts.
    let centers_base = [1.0, 1.04, 0.97];
    let centers_new = [1.03, 0.98, 1.01];
    let base: Vec<StoredSession> = centers_base
        .iter()
        .map(|s| session("f", &runs(*s)))
        .collect();
    let new: Vec<StoredSession> = centers_new
        .iter()
        .map(|s| session("f", &runs(*s)))
        .collect();
    let (c, notes) =
        only(compare_calibrated(&base, &new, &CompareSettings::default(), &[]).unwrap());
    assert_eq!(c.noise_source, Some(NoiseSource::Sessions));
    assert_eq!((c.base_sessions, c.new_sessions), (3, 3));
    // By hand: Student's t on the session log-medians. Every session has the same runs up to
    // its scale, so the medians differ by the logs of the centers: the estimate is the
    // difference of their means, the pooled variance over 3 + 3 - 2 = 4 df times 1/3 + 1/3.
    let ln = |v: &f64| v.ln();
    let b: Vec<f64> = centers_base.iter().map(ln).collect();
    let n: Vec<f64> = centers_new.iter().map(ln).collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let ss = |xs: &[f64]| xs.iter().map(|x| (x - mean(xs)).powi(2)).sum::<f64>();
    let estimate = mean(&n) - mean(&b);
    let se = ((ss(&b) + ss(&n)) / 4.0 * (2.0 / 3.0)).sqrt();
    let t4 = 2.776_445_105_197_793;
    assert!(
        (c.ratio.ln() - estimate).abs() < 1e-12,
        "{} {estimate}",
        c.ratio
    );
    assert_eq!(c.ratio_df, Some(4.0));
    let (lo, hi) = (c.ratio_ci_low.unwrap(), c.ratio_ci_high.unwrap());
    assert!((hi.ln() - (estimate + t4 * se)).abs() < 1e-9, "{hi}");
    assert!((lo.ln() - (estimate - t4 * se)).abs() < 1e-9, "{lo}");
    assert!(lo < c.runs_ci_low.unwrap() && hi > c.runs_ci_high.unwrap());
    // The Hodges-Lehmann ratio of all runs pooled stays in runs_ratio.
    assert!(c.runs_ratio >= c.runs_ci_low.unwrap() && c.runs_ratio <= c.runs_ci_high.unwrap());
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(
        !notes.iter().any(|n| n.contains("no calibration")),
        "{notes:?}"
    );

    // A calibration of the environment pools with the sessions: its 4 degrees of freedom add.
    let (c, _) = only(
        compare_calibrated(
            &base,
            &new,
            &CompareSettings::default(),
            &[calibration("f", 0.0)],
        )
        .unwrap(),
    );
    assert_eq!(c.noise_source, Some(NoiseSource::Pooled));
    assert_eq!(c.ratio_df, Some(8.0));
}
