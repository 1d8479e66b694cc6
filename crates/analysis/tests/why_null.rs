//! The false-positive rate of the slow-run explanation, by simulation: seeded sessions whose
//! run values are independent of every monitor key, and the share of them in which any key is
//! called an explanation (adjusted p below 0.05). docs/why.md quotes the figures this prints
//! (`cargo test -p vernier-analysis --test why_null -- --nocapture`).

#![allow(clippy::unwrap_used)]

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use vernier_analysis::monitors_why::slow_runs;
use vernier_model::monitor::SeriesKind::{Counter, Gauge};
use vernier_testkit::monitored_configuration;

fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    // 53 random bits in [0, 1).
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal deviate (Box-Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u = uniform(rng).max(f64::MIN_POSITIVE);
    let v = uniform(rng);
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Share of `sessions` sessions of `runs` runs in which some key passes. Each run has 24 keys,
/// as the default monitors give them: 8 continuous (CPU times), 8 of them driven by one shared
/// factor (keys that count the same activity, positively dependent), 8 small counts with ties
/// (blocked tasks, major faults); values lognormal with 2% of runs 3 times slower, so that
/// the runs also have outliers.
fn false_positive_rate(sessions: usize, runs: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names: Vec<String> = (0..24).map(|k| format!("k{k:02}")).collect();
    let mut passing = 0;
    for _ in 0..sessions {
        let mut per_run = Vec::new();
        let mut values = Vec::new();
        for _ in 0..runs {
            let shared = normal(&mut rng);
            let mut keys = Vec::new();
            for (k, name) in names.iter().enumerate() {
                let (kind, v) = match k / 8 {
                    0 => (Counter, 1e8 * (0.1 * normal(&mut rng)).exp()),
                    1 => (Gauge, 10.0 + shared + 0.5 * normal(&mut rng)),
                    _ => (Counter, (uniform(&mut rng) * 4.0).floor()),
                };
                keys.push(("sim", name.as_str(), kind, v));
            }
            per_run.push(keys);
            let slow = if uniform(&mut rng) < 0.02 { 3.0 } else { 1.0 };
            values.push(slow * (0.05 * normal(&mut rng)).exp());
        }
        let mut c = monitored_configuration(&per_run);
        for (run, v) in c.runs.iter_mut().zip(&values) {
            run.values.insert("time", *v);
        }
        if slow_runs(&c).unwrap().explanations().next().is_some() {
            passing += 1;
        }
    }
    passing as f64 / sessions as f64
}

/// Sessions a size: `VERNIER_WHY_SESSIONS` (docs/why.md's figures: 2,000 in release, where
/// the binomial standard error of a 5% rate is 0.5 points), else 60, which a debug build
/// computes in a minute or two.
fn sessions() -> usize {
    std::env::var("VERNIER_WHY_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60)
}

#[test]
fn without_association_few_sessions_name_a_key() {
    let sessions = sessions();
    let sizes: &[(usize, u64)] = if sessions > 100 {
        &[(8, 1), (12, 2), (20, 3), (40, 4), (100, 5), (301, 6)]
    } else {
        &[(8, 1)]
    };
    for &(runs, seed) in sizes {
        let rate = false_positive_rate(sessions, runs, seed);
        println!(
            "{runs} runs, {sessions} sessions: {:.2}% name a key",
            rate * 100.0
        );
        // Benjamini-Hochberg at 5% with no association bounds the chance of any false
        // explanation by 5% (it controls the family-wise error then). Three binomial
        // standard errors above 5%: 13.4% at 60 sessions, 6.5% at 2,000.
        let bound = 0.05 + 3.0 * (0.05 * 0.95 / sessions as f64).sqrt();
        assert!(rate < bound, "{runs} runs: {rate}");
    }
}
