//! How often `vernier bisect` names the right commit and what it costs in sessions, by
//! simulation with a known first bad commit, against `git bisect run` with one session a step
//! and a fixed threshold; for `bench/bisect.sh` and the table in docs/bisect.md.
//!
//! A history is 65 commits (the good end, 63 between, the bad end). Its level steps up at a
//! commit drawn uniformly from 1 to 64 (one step), or in two steps at two such commits (the
//! first of 60% of the regression, or of 40%). The first bad commit, the right answer, is the
//! first whose level is above the middle of the ends: the first step's commit when it is 60%,
//! the second's when it is 40%. A session of a commit is 10 runs, log values
//! `level + b + e` with a session effect `b ~ N(0, tau^2)` and run noise `e ~ N(0, 1%)`.
//!
//! - vernier: `vernier_analysis::bisect::plan` driven to its end, each `Measure` answered by
//!   a fresh session of that commit (the function `vernier bisect` calls on its stored
//!   sessions);
//! - git bisect run: one session at each end, then binary search with one session a step,
//!   calling a commit bad when its session median exceeds the good end's by more than half the
//!   true regression (the best fixed threshold, known in advance).
//!
//! Usage: bisect_simulation [--trials N] [--seed N] [--budget N] [--level F]
//!        [--commit-sessions N]
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::process::ExitCode;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use vernier_analysis::bisect::{plan, BisectSettings, Measurements, Outcome};
use vernier_stats::median;

const COMMITS: usize = 65;
const RUNS: usize = 10;
const RUN_SIGMA: f64 = 0.01;

/// A standard normal deviate (Box-Muller on two 53-bit uniforms in (0, 1)).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let v = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn commit(rng: &mut ChaCha8Rng) -> usize {
    1 + (rng.next_u64() % (COMMITS as u64 - 1)) as usize
}

#[derive(Clone, Copy)]
enum Shape {
    One,
    /// Two steps, the first this share of the regression.
    Two(f64),
}

/// The log level of each commit and the right answer.
fn history(rng: &mut ChaCha8Rng, step: f64, shape: Shape) -> (Vec<f64>, usize) {
    let total = step.ln_1p();
    match shape {
        Shape::One => {
            let at = commit(rng);
            let levels = (0..COMMITS)
                .map(|i| if i >= at { total } else { 0.0 })
                .collect();
            (levels, at)
        }
        Shape::Two(first) => {
            let (mut a, mut b) = (commit(rng), commit(rng));
            while a == b {
                b = commit(rng);
            }
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            let levels = (0..COMMITS)
                .map(|i| {
                    if i >= b {
                        total
                    } else if i >= a {
                        first * total
                    } else {
                        0.0
                    }
                })
                .collect();
            (levels, if first > 0.5 { a } else { b })
        }
    }
}

fn session(rng: &mut ChaCha8Rng, level: f64, tau: f64) -> Vec<f64> {
    let b = tau * normal(rng);
    (0..RUNS)
        .map(|_| (level + b + RUN_SIGMA * normal(rng)).exp())
        .collect()
}

/// What a bisection concluded: the right commit, another one, or none (budget spent, the
/// commits left all skipped, or no regression established).
#[derive(Clone, Copy, PartialEq)]
enum Named {
    Right,
    Wrong,
    None,
}

/// (what it named, sessions spent, the confidence it stated in what it named)
fn vernier(
    rng: &mut ChaCha8Rng,
    levels: &[f64],
    right: usize,
    tau: f64,
    settings: &BisectSettings,
) -> (Named, usize, f64) {
    let mut m = Measurements::new(levels.len());
    loop {
        let Ok(p) = plan(&m, &[], settings) else {
            return (Named::None, m.spent(), 0.0);
        };
        let confidence = p.confidence.unwrap_or(0.0);
        match p.outcome {
            Outcome::Measure { index } => {
                let values = session(rng, levels[index], tau);
                if m.add_session(index, &values).is_err() {
                    return (Named::None, m.spent(), 0.0);
                }
            }
            Outcome::Found { first_bad, .. } if first_bad == right => {
                return (Named::Right, m.spent(), confidence)
            }
            Outcome::Found { .. } => return (Named::Wrong, m.spent(), confidence),
            _ => return (Named::None, m.spent(), 0.0),
        }
    }
}

fn session_median(rng: &mut ChaCha8Rng, level: f64, tau: f64) -> f64 {
    median(&session(rng, level, tau)).unwrap_or(f64::NAN).ln()
}

fn git_bisect(rng: &mut ChaCha8Rng, levels: &[f64], right: usize, tau: f64) -> (bool, usize) {
    let last = levels.len() - 1;
    let good = session_median(rng, levels[0], tau);
    let _bad = session_median(rng, levels[last], tau);
    let threshold = levels[last] / 2.0;
    let (mut lo, mut hi, mut spent) = (0, last, 2);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        spent += 1;
        if session_median(rng, levels[mid], tau) - good > threshold {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (hi == right, spent)
}

struct Args {
    trials: usize,
    seed: u64,
    settings: BisectSettings,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        trials: 1000,
        seed: 28,
        settings: BisectSettings {
            budget_sessions: 80,
            ..BisectSettings::default()
        },
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--trials" => a.trials = value.parse().map_err(|e| bad(&e))?,
            "--seed" => a.seed = value.parse().map_err(|e| bad(&e))?,
            "--budget" => a.settings.budget_sessions = value.parse().map_err(|e| bad(&e))?,
            "--level" => a.settings.level = value.parse().map_err(|e| bad(&e))?,
            "--commit-sessions" => {
                a.settings.commit_sessions = value.parse().map_err(|e| bad(&e))?;
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bisect_simulation: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "{} bisections per row, {COMMITS} commits, {RUNS} runs a session at a run noise of \
         {:.0}%, budget {} sessions, at most {} at a commit, level {}, seed {}",
        args.trials,
        RUN_SIGMA * 100.0,
        args.settings.budget_sessions,
        args.settings.commit_sessions,
        args.settings.level,
        args.seed
    );
    println!();
    println!(
        "| regression | shape | session noise | vernier: right | vernier: wrong | \
         vernier: mean sessions | git bisect run: right | git bisect run: sessions | \
         vernier: right of those named | vernier: mean confidence stated |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let shapes = [
        (Shape::One, "one step"),
        (Shape::Two(0.6), "two steps, 60% first"),
        (Shape::Two(0.4), "two steps, 40% first"),
    ];
    for step in [0.02, 0.05, 0.10] {
        for (shape, shape_name) in shapes {
            for tau in [0.01, 0.02, 0.03, 0.05] {
                let mut rng = ChaCha8Rng::seed_from_u64(
                    args.seed ^ ((step * 1e4) as u64) << 32 ^ ((tau * 1e4) as u64) << 16,
                );
                let (mut right, mut wrong, mut cost, mut git_right, mut git_cost) = (0, 0, 0, 0, 0);
                let mut stated = 0.0;
                for _ in 0..args.trials {
                    let (levels, answer) = history(&mut rng, step, shape);
                    let (named, spent, confidence) =
                        vernier(&mut rng, &levels, answer, tau, &args.settings);
                    stated += confidence;
                    right += usize::from(named == Named::Right);
                    wrong += usize::from(named == Named::Wrong);
                    cost += spent;
                    let (ok, spent) = git_bisect(&mut rng, &levels, answer, tau);
                    git_right += usize::from(ok);
                    git_cost += spent;
                }
                let n = args.trials as f64;
                // Of the bisections that named a commit: how many named the right one, and
                // the mean probability they stated that it was right.
                let named = (right + wrong) as f64;
                let of_named = |x: f64| {
                    if named > 0.0 {
                        format!("{:.1}%", x / named * 100.0)
                    } else {
                        "-".to_string()
                    }
                };
                println!(
                    "| {:.0}% | {shape_name} | {:.0}% | {:.1}% | {:.1}% | {:.1} | {:.1}% | {:.1} \
                     | {} | {} |",
                    step * 100.0,
                    tau * 100.0,
                    right as f64 / n * 100.0,
                    wrong as f64 / n * 100.0,
                    cost as f64 / n,
                    git_right as f64 / n * 100.0,
                    git_cost as f64 / n,
                    of_named(right as f64),
                    of_named(stated),
                );
            }
        }
    }
    ExitCode::SUCCESS
}
