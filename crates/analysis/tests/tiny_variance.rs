//! The 27 sessions that made `compare` and `history` hang: a between-session variance that is
//! positive but tiny gave Satterthwaite degrees of freedom beyond 2e7, where statrs 0.19's t
//! quantile loops for ever. They are rebuilt here by a seeded generator: a series of 27
//! sessions of 10 runs (run SD 1%), the last 14 of them 10% slower, whose session medians are
//! spread so that their pooled mean square exceeds the mean within-session variance by one
//! part in 1e9. Every computation on them must end (a watchdog fails the test after a minute
//! instead of hanging it) and give finite intervals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::time::Duration;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;
use vernier_analysis::{
    compare_calibrated, history, predicted_mdc, CompareSettings, HistorySettings,
};
use vernier_model::{Calibration, Options, StoredSession};
use vernier_stats::{
    between_session_variance, normal_quantile, satterthwaite, Component, SessionMedian,
};
use vernier_testkit::synthetic_session;

const SESSIONS: usize = 27;
const FIRST_LEVEL: usize = 13;
const RUNS: usize = 10;

fn session(index: usize, values: &[f64]) -> StoredSession {
    synthetic_session(values)
        .benchmark("bench")
        .started_at((index as i64 + 1) * 86_400_000_000_000)
        .hostname("farm1")
        .build(Uuid::new_v4)
}

/// Sample mean and the sums of squares and products about it.
fn moments(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut saa, mut sab, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        saa += (x - ma) * (x - ma);
        sab += (x - ma) * (y - mb);
        sbb += (y - mb) * (y - mb);
    }
    (saa, sab, sbb)
}

/// The series: log run values `level + c_g z_i + e_ij` with seeded normal `z_i` and `e_ij`
/// (run SD 1%), where `c_g` solves, in each group, `SS(m + c z) / (k_g - 1) = (1 + 1e-9) v`:
/// `v` the mean Maritz-Jarrett variance of all 27 session medians (a shift leaves it as it is),
/// so the pooled mean square exceeds it by a part in 1e9.
fn tiny_variance_series(seed: u64) -> Vec<StoredSession> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = move || {
        let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        normal_quantile(u).unwrap()
    };
    let noise: Vec<Vec<f64>> = (0..SESSIONS)
        .map(|_| (0..RUNS).map(|_| 0.01 * normal()).collect())
        .collect();
    let z: Vec<f64> = (0..SESSIONS).map(|_| normal()).collect();
    let stats: Vec<SessionMedian> = noise
        .iter()
        .map(|e| SessionMedian::of(e).unwrap())
        .collect();
    let v = stats.iter().map(|s| s.within_variance).sum::<f64>() / SESSIONS as f64;
    let target = v * (1.0 + 1e-9);
    let mut logs = Vec::with_capacity(SESSIONS);
    for (range, level) in [(0..FIRST_LEVEL, 0.0), (FIRST_LEVEL..SESSIONS, 1.1f64.ln())] {
        let m: Vec<f64> = stats[range.clone()].iter().map(|s| s.median).collect();
        let (smm, smz, szz) = moments(&m, &z[range.clone()]);
        // szz c^2 + 2 smz c + smm = target (k_g - 1).
        let need = target * (range.len() - 1) as f64 - smm;
        let c = (-smz + (smz * smz + szz * need).sqrt()) / szz;
        assert!(
            c.is_finite() && c > 0.0,
            "seed {seed}: no spread reaches the target"
        );
        for i in range {
            logs.push(
                noise[i]
                    .iter()
                    .map(|e| level + c * z[i] + e)
                    .collect::<Vec<_>>(),
            );
        }
    }
    logs.iter()
        .enumerate()
        .map(|(i, l)| session(i, &l.iter().map(|x| x.exp()).collect::<Vec<_>>()))
        .collect()
}

/// Runs `f` on another thread and fails if it has not finished within a minute.
fn ends<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what} did not end within a minute"))
}

fn logs_of(s: &StoredSession) -> Vec<f64> {
    s.configurations[0]
        .values()
        .iter()
        .map(|v| v.ln())
        .collect()
}

#[test]
fn the_generator_reproduces_the_tiny_positive_variance() {
    let series = tiny_variance_series(27);
    assert_eq!(series.len(), SESSIONS);
    let medians: Vec<SessionMedian> = series
        .iter()
        .map(|s| SessionMedian::of(&logs_of(s)).unwrap())
        .collect();
    let b = between_session_variance(&[&medians[..FIRST_LEVEL], &medians[FIRST_LEVEL..]]).unwrap();
    assert!(
        b.variance > 0.0 && b.variance < 1e-8 * b.within,
        "between {:e}, within {:e}",
        b.variance,
        b.within
    );
    // What the old widening made of it: the runs' part as known, the between part with 25
    // degrees of freedom, Satterthwaite's sum far beyond the 2e7 where statrs' t quantile
    // never returns.
    let total = satterthwaite(&[
        Component::known(b.within),
        Component::with_df(b.variance, b.df),
    ])
    .unwrap();
    assert!(total.df() > 2e7, "{}", total.df());
}

#[test]
fn compare_history_and_calibrate_end_on_the_sessions_that_hung() {
    let series = tiny_variance_series(27);
    let settings = CompareSettings::default();

    let (base, new) = (
        series[..FIRST_LEVEL].to_vec(),
        series[FIRST_LEVEL..].to_vec(),
    );
    let report = ends("compare", move || {
        compare_calibrated(&base, &new, &settings, &[]).unwrap()
    });
    let c = &report.comparisons[0];
    let (low, high) = (c.ratio_ci_low.unwrap(), c.ratio_ci_high.unwrap());
    assert!(
        low.is_finite() && high.is_finite() && low < 1.1 && 1.1 < high,
        "[{low}, {high}]"
    );

    let all = series.clone();
    let h = ends("history", move || {
        history(&all, &[], &HistorySettings::default(), &[]).unwrap()
    });
    let steps = &h.series[0].steps;
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0].index, FIRST_LEVEL);
    assert!(steps[0].change.ratio_ci_low.unwrap().is_finite());

    // A calibration of the first 13 sessions, as `vernier calibrate` stores it, in the regime
    // where its between part is a sliver of the within part.
    let medians: Vec<SessionMedian> = series[..FIRST_LEVEL]
        .iter()
        .map(|s| SessionMedian::of(&logs_of(s)).unwrap())
        .collect();
    let b = between_session_variance(&[&medians]).unwrap();
    let within = b.within;
    let calibration = Calibration {
        id: Uuid::nil(),
        created_at_ns: 0,
        fingerprint: "f".into(),
        benchmark: "bench".into(),
        options: Options::default(),
        metric: "time".into(),
        sessions: FIRST_LEVEL as u32,
        runs: (FIRST_LEVEL * RUNS) as u32,
        session_sd: (within * (1.0 + 1e-12)).sqrt(),
        within_sd: within.sqrt(),
        between_sd: (within * 1e-12).sqrt(),
        df: (FIRST_LEVEL - 1) as f64,
        session_ids: Vec::new(),
    };
    let cal = calibration.clone();
    let mdc = ends("calibrate's MDC", move || predicted_mdc(&cal));
    assert!(mdc.is_some_and(f64::is_finite), "{mdc:?}");
    let (one_base, one_new) = (vec![series[0].clone()], vec![series[SESSIONS - 1].clone()]);
    let report = ends("compare of one session a side", move || {
        compare_calibrated(&one_base, &one_new, &settings, &[calibration]).unwrap()
    });
    assert!(report.comparisons[0].ratio_ci_low.unwrap().is_finite());
}
