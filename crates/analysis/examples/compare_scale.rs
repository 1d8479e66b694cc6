//! Times `vernier_analysis::compare` (what `vernier compare` runs once the sessions are loaded)
//! on two synthetic sessions of one configuration, for `bench/compare-scale.sh`.
//!
//! `cargo run --release -p vernier-analysis --example compare_scale -- BASE_RUNS NEW_RUNS
//! [RESOLUTION_NS] [--input-only]`
//!
//! The values are lognormal times around 1 ms (sigma 2%), NEW 1% slower, drawn from a seeded
//! ChaCha8 generator so every invocation compares the same data. With `RESOLUTION_NS` > 0 they
//! are rounded to that many nanoseconds, as a timer would round them, so large samples have
//! ties (the normal approximation); 0 (the default) keeps them untied, which lets a small
//! sample against a large one use the exact Mann-Whitney distribution. `--input-only` builds the sessions
//! and stops, so the script can report the memory of the input apart from that of the
//! comparison.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::process::ExitCode;
use std::time::Instant;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;
use vernier_analysis::{compare, CompareSettings};
use vernier_model::StoredSession;
use vernier_stats::normal_quantile;
use vernier_testkit::synthetic_session;

fn values(n: usize, scale: f64, resolution_ns: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    (0..n)
        .map(|_| {
            // 53 random bits as a uniform in (0, 1): never 0, so the quantile is finite.
            let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let t = scale * 1e-3 * (0.02 * normal_quantile(u).unwrap_or(0.0)).exp();
            if resolution_ns > 0.0 {
                (t * 1e9 / resolution_ns).round() * resolution_ns / 1e9
            } else {
                t
            }
        })
        .collect()
}

/// A session of `values` under nil ids.
fn session(values: &[f64]) -> StoredSession {
    synthetic_session(values).build(Uuid::nil)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .filter_map(|a| a.parse().ok())
        .collect();
    let input_only = args.iter().any(|a| a == "--input-only");
    let (m, n, resolution) = match sizes[..] {
        [m, n] => (m, n, 0),
        [m, n, r] => (m, n, r),
        _ => {
            eprintln!(
                "usage: compare_scale BASE_RUNS NEW_RUNS [RESOLUTION_NS] [--input-only] \
                 (non-negative integers)"
            );
            return ExitCode::from(2);
        }
    };
    if m == 0 || n == 0 {
        eprintln!("compare_scale: BASE_RUNS and NEW_RUNS must be positive, got {m} and {n}");
        return ExitCode::from(2);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_123);
    let resolution = resolution as f64;
    let base = [session(&values(m, 1.0, resolution, &mut rng))];
    let new = [session(&values(n, 1.01, resolution, &mut rng))];
    if input_only {
        println!("input {m} vs {n}");
        return ExitCode::SUCCESS;
    }
    let start = Instant::now();
    let report = match compare(&base, &new, &CompareSettings::default()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("compare_scale: {e}");
            return ExitCode::FAILURE;
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let c = &report.comparisons[0];
    println!(
        "compare {m} vs {n}: {seconds:.3} s, ratio {:.5} [{:?}, {:?}], p {:.3e}, {}",
        c.ratio, c.ratio_ci_low, c.ratio_ci_high, c.p_value, c.verdict
    );
    ExitCode::SUCCESS
}
