//! Coverage, false verdicts, power and the calibration of the minimum detectable change of
//! `vernier compare`, by simulation with known truth, for `bench/session-coverage.sh`.
//!
//! Each trial builds synthetic sessions (log run values `b_i + e_ij`: a session effect
//! `b_i ~ N(0, tau^2)` shared by every run of session `i`, run noise `e_ij ~ N(0, sigma^2)`,
//! optionally a share of slow runs) and compares them with
//! `vernier_analysis::compare_calibrated`, the function `vernier compare` calls once it has
//! loaded the sessions and the stored calibrations of their environment (crates/cli/src/db.rs,
//! `compare_sides`): the figures are those of the binary, without its database round trip
//! (`bench/session-coverage.sh --binary` checks that claim on a sample through the binary).
//! A calibration is simulated as `vernier calibrate` makes it (crates/cli/src/cmd/calibrate.rs):
//! `--calibration-sessions` sessions of the same runs, their session log-medians and
//! Maritz-Jarrett standard errors through `vernier_stats::between_session_variance`.
//!
//! Tables (markdown rows on standard output):
//! - `main`: per layout (sessions a side, with or without a calibration) and ratio of session
//!   noise to run noise: coverage of the true ratio by `ratio_ci` in A/A trials, false
//!   verdicts (`faster`/`slower`) in A/A trials, power (share `slower`) for a planted +10%,
//!   the median printed MDC of the A/A trials and the share `slower` when the planted change
//!   is that MDC, and when each A/A trial's own MDC is planted in new sessions of the same
//!   machine (its calibration): 80% if the MDC says what it claims;
//! - `ties`: values rounded to a grid, true ratio drawn at random, one session a side with a
//!   calibration: the share of comparisons with an interval, and the coverage of the true
//!   ratio by the runs' interval alone, moved out by half the rounding margin and by all of
//!   it, and by the interval the verdict uses;
//! - `dump`: one JSON line per trial of one `--layout` and `--tau` (and `--change`): its
//!   sessions, calibrations and the comparison, for `bench/session-coverage.sh --binary`,
//!   which imports the sessions, stores the calibrations and runs `vernier compare` on them.
//!
//! Usage: session_coverage [--table main|ties|dump] [--trials N] [--runs N] [--sigma F]
//!        [--slow F] [--seed N] [--calibration-sessions N] [--layout L] [--tau F]
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::process::ExitCode;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;
use vernier_analysis::{compare_calibrated, CompareSettings, Comparison, Verdict};
use vernier_model::{Calibration, Options, StoredSession};
use vernier_stats::{between_session_variance, SessionMedian};
use vernier_testkit::synthetic_session;

/// A standard normal deviate (Box-Muller on two 53-bit uniforms in (0, 1)).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let v = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// How the runs of a session are drawn.
#[derive(Clone, Copy)]
struct Noise {
    /// Session-to-session SD of the log values.
    tau: f64,
    /// Run-to-run SD of the log values.
    sigma: f64,
    /// Share of runs made slower by `3 sigma` (the fixture generator's slow runs).
    slow: f64,
    /// Values rounded to multiples of this (0: not rounded).
    grid: f64,
}

/// The values of one session around `exp(shift)`.
fn session_values(runs: usize, shift: f64, noise: Noise, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let effect = noise.tau * normal(rng);
    (0..runs)
        .map(|_| {
            let mut log = shift + effect + noise.sigma * normal(rng);
            if noise.slow > 0.0 && uniform(rng) < noise.slow {
                log += 3.0 * noise.sigma;
            }
            let v = log.exp();
            if noise.grid > 0.0 {
                ((v / noise.grid).round() * noise.grid).max(noise.grid)
            } else {
                v
            }
        })
        .collect()
}

fn session(values: &[f64], ids: &mut Ids) -> StoredSession {
    synthetic_session(values).build(|| ids.next())
}

/// Ids of sessions, configurations and runs: nil, or distinct ones for the sessions that
/// `--table dump` writes for an import.
struct Ids(Option<u128>);

impl Ids {
    fn next(&mut self) -> Uuid {
        match &mut self.0 {
            None => Uuid::nil(),
            Some(n) => {
                *n += 1;
                Uuid::from_u128(*n)
            }
        }
    }
}

/// A calibration of `sessions` sessions as `vernier calibrate` estimates it.
fn calibration(sessions: usize, runs: usize, noise: Noise, rng: &mut ChaCha8Rng) -> Calibration {
    let medians: Vec<SessionMedian> = (0..sessions)
        .map(|_| {
            let logs: Vec<f64> = session_values(runs, 0.0, noise, rng)
                .iter()
                .map(|v| v.ln())
                .collect();
            SessionMedian::of(&logs).unwrap_or(SessionMedian {
                median: 0.0,
                within_variance: 0.0,
            })
        })
        .collect();
    let b = between_session_variance(&[&medians]).unwrap_or(vernier_stats::BetweenSession {
        sessions,
        mean_square: 0.0,
        within: 0.0,
        variance: 0.0,
        df: 0.0,
    });
    Calibration {
        id: Uuid::nil(),
        created_at_ns: 0,
        fingerprint: "f".into(),
        benchmark: "synthetic".into(),
        options: Options::default(),
        metric: "time".into(),
        sessions: sessions as u32,
        runs: (sessions * runs) as u32,
        session_sd: b.mean_square.sqrt(),
        within_sd: b.within.sqrt(),
        between_sd: b.variance.sqrt(),
        df: b.df,
        session_ids: Vec::new(),
    }
}

/// Sessions a side and whether a calibration of the environment exists.
#[derive(Clone, Copy)]
struct Layout {
    base: usize,
    new: usize,
    calibrated: bool,
}

impl Layout {
    fn parse(text: &str) -> Option<Layout> {
        let (sides, calibrated) = match text.strip_suffix("cal") {
            Some(s) => (s, true),
            None => (text, false),
        };
        let (b, n) = sides.split_once('v')?;
        Some(Layout {
            base: b.parse().ok().filter(|&k| k > 0)?,
            new: n.parse().ok().filter(|&k| k > 0)?,
            calibrated,
        })
    }

    fn name(&self) -> String {
        format!(
            "{} vs {}{}",
            self.base,
            self.new,
            if self.calibrated { ", calibrated" } else { "" }
        )
    }
}

struct Params {
    runs: usize,
    /// Distinct ids for `--table dump`.
    distinct_ids: bool,
    calibration_sessions: usize,
    settings: CompareSettings,
}

/// The sessions and calibrations of one trial.
struct Trial {
    base: Vec<StoredSession>,
    new: Vec<StoredSession>,
    calibrations: Vec<Calibration>,
}

fn draw(layout: Layout, noise: Noise, change: f64, p: &Params, rng: &mut ChaCha8Rng) -> Trial {
    let calibrations = if layout.calibrated {
        vec![calibration(p.calibration_sessions, p.runs, noise, rng)]
    } else {
        Vec::new()
    };
    draw_with(layout, noise, change, p, rng, calibrations)
}

/// The sessions of a trial with the calibrations given (those of another trial of this
/// machine).
fn draw_with(
    layout: Layout,
    noise: Noise,
    change: f64,
    p: &Params,
    rng: &mut ChaCha8Rng,
    calibrations: Vec<Calibration>,
) -> Trial {
    let mut ids = Ids(p.distinct_ids.then(|| u128::from(rng.next_u64()) << 64));
    let base: Vec<StoredSession> = (0..layout.base)
        .map(|_| session(&session_values(p.runs, 0.0, noise, rng), &mut ids))
        .collect();
    let shift = change.ln_1p();
    let new: Vec<StoredSession> = (0..layout.new)
        .map(|_| session(&session_values(p.runs, shift, noise, rng), &mut ids))
        .collect();
    Trial {
        base,
        new,
        calibrations,
    }
}

fn compared(t: &Trial, p: &Params) -> Option<Comparison> {
    let mut report = compare_calibrated(&t.base, &t.new, &p.settings, &t.calibrations).ok()?;
    (!report.comparisons.is_empty()).then(|| report.comparisons.remove(0))
}

/// One comparison of `layout` with a planted relative change.
fn trial(
    layout: Layout,
    noise: Noise,
    change: f64,
    p: &Params,
    rng: &mut ChaCha8Rng,
) -> Option<Comparison> {
    compared(&draw(layout, noise, change, p, rng), p)
}

fn covers(c: &Comparison, ratio: f64) -> Option<bool> {
    match (c.ratio_ci_low, c.ratio_ci_high) {
        (Some(lo), Some(hi)) => Some(lo <= ratio && ratio <= hi),
        _ => None,
    }
}

fn pct(k: usize, n: usize) -> String {
    if n == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * k as f64 / n as f64)
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

fn main_table(trials: usize, sigma: f64, slow: f64, p: &Params, rng: &mut ChaCha8Rng) {
    println!(
        "| layout | session SD / run SD | coverage | false verdicts | power +10% | median MDC | \
         detected at the median MDC | detected at its own MDC |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let layouts = [
        "1v1", "1v1cal", "1v2", "2v2", "3v3", "5v5", "1v2cal", "3v3cal",
    ];
    for name in layouts {
        let Some(layout) = Layout::parse(name) else {
            continue;
        };
        for ratio in [0.0, 0.5, 1.0, 3.0, 5.0, 10.0] {
            let noise = Noise {
                tau: ratio * sigma,
                sigma,
                slow,
                grid: 0.0,
            };
            let (mut covered, mut with_ci, mut false_verdicts, mut mdcs) = (0, 0, 0, Vec::new());
            let (mut own, mut own_detected) = (0, 0);
            for _ in 0..trials {
                let t = draw(layout, noise, 0.0, p, rng);
                let Some(c) = compared(&t, p) else {
                    continue;
                };
                // The change this comparison says it detects with 80% probability, planted in
                // new sessions of the same machine (its calibration).
                if let Some(m) = c.mdc.filter(|m| m.is_finite()) {
                    let planted = draw_with(layout, noise, m, p, rng, t.calibrations.clone());
                    own += 1;
                    if compared(&planted, p).is_some_and(|c| c.verdict == Verdict::Slower) {
                        own_detected += 1;
                    }
                }
                if let Some(hit) = covers(&c, 1.0) {
                    with_ci += 1;
                    covered += usize::from(hit);
                }
                if matches!(c.verdict, Verdict::Faster | Verdict::Slower) {
                    false_verdicts += 1;
                }
                if let Some(m) = c.mdc {
                    mdcs.push(m);
                }
            }
            let detected = |change: f64, rng: &mut ChaCha8Rng| {
                let hits = (0..trials)
                    .filter(|_| {
                        trial(layout, noise, change, p, rng)
                            .is_some_and(|c| c.verdict == Verdict::Slower)
                    })
                    .count();
                pct(hits, trials)
            };
            let power = detected(0.10, rng);
            let mdc = median(mdcs);
            let at_mdc = match mdc {
                Some(m) if m.is_finite() => detected(m, rng),
                _ => "-".into(),
            };
            println!(
                "| {} | {ratio} | {} | {} | {power} | {} | {at_mdc} | {} |",
                layout.name(),
                pct(covered, with_ci),
                pct(false_verdicts, trials),
                mdc.map_or("-".into(), |m| format!("{:.1}%", 100.0 * m)),
                pct(own_detected, own),
            );
        }
    }
}

fn ties_table(trials: usize, p: &Params, rng: &mut ChaCha8Rng) {
    println!(
        "| runs a side | grid | run SD | with an interval | runs' interval | moved out by half \
         a step (the verdict's margin) | moved out by a step (the worst case) | the verdict's \
         interval |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    // One session a side with a calibration of this machine (no session noise): the runs'
    // interval (`runs_ci`), which ties and rounding shape, with and without the margin for
    // rounding, and the interval the verdict uses (`ratio_ci`, which adds the calibration's
    // uncertainty).
    let layout = Layout {
        base: 1,
        new: 1,
        calibrated: true,
    };
    for runs in [10, 20] {
        // Unrounded values first: the coverage of the same layout without ties.
        for (grid, sigma) in [
            (0.0, 0.02),
            (0.01, 0.02),
            (0.02, 0.02),
            (0.05, 0.02),
            (0.05, 0.05),
        ] {
            let noise = Noise {
                tau: 0.0,
                sigma,
                slow: 0.0,
                grid,
            };
            let params = Params {
                runs,
                distinct_ids: false,
                calibration_sessions: p.calibration_sessions,
                settings: p.settings,
            };
            let (mut with_ci, mut verdicts) = (0, 0);
            let mut runs_covered = [0; 3];
            for _ in 0..trials {
                // A true ratio between 0.97 and 1.10, off the grid.
                let change = -0.03 + 0.13 * uniform(rng);
                let truth = change.ln_1p();
                let Some(c) = trial(layout, noise, change, &params, rng) else {
                    continue;
                };
                if let Some(hit) = covers(&c, 1.0 + change) {
                    with_ci += 1;
                    verdicts += usize::from(hit);
                }
                if let (Some(lo), Some(hi)) = (c.runs_ci_low, c.runs_ci_high) {
                    // The most that rounding to the detected step can move a log-ratio (twice
                    // what it can move one value), and half of it, the verdict's margin
                    // (docs/compare.md, "Rounded values").
                    let worst = c.resolution.map_or(0.0, |r| -2.0 * (-r / 2.0).ln_1p());
                    for (k, m) in [0.0, worst / 2.0, worst].into_iter().enumerate() {
                        let inside = lo.ln() - m <= truth && truth <= hi.ln() + m;
                        runs_covered[k] += usize::from(inside);
                    }
                }
            }
            println!(
                "| {runs} | {} | {:.0}% | {} | {} | {} | {} | {} |",
                if grid > 0.0 {
                    format!("{:.0}%", grid * 100.0)
                } else {
                    "none".to_string()
                },
                sigma * 100.0,
                pct(with_ci, trials),
                pct(runs_covered[0], with_ci),
                pct(runs_covered[1], with_ci),
                pct(runs_covered[2], with_ci),
                pct(verdicts, with_ci)
            );
        }
    }
}

fn opt<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> Result<T, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} needs a valid value")),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let table: String = opt(&args, "--table", "main".to_string())?;
    let trials: usize = opt(&args, "--trials", 2000)?;
    let runs: usize = opt(&args, "--runs", 10)?;
    let sigma: f64 = opt(&args, "--sigma", 0.01)?;
    let slow: f64 = opt(&args, "--slow", 0.0)?;
    let seed: u64 = opt(&args, "--seed", 22)?;
    let calibration_sessions: usize = opt(&args, "--calibration-sessions", 5)?;
    if runs == 0 || trials == 0 || calibration_sessions < 2 {
        return Err("--runs and --trials must be positive, --calibration-sessions >= 2".into());
    }
    let p = Params {
        runs,
        distinct_ids: table == "dump",
        calibration_sessions,
        settings: CompareSettings::default(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match table.as_str() {
        "main" => main_table(trials, sigma, slow, &p, &mut rng),
        "ties" => ties_table(trials, &p, &mut rng),
        "dump" => {
            let layout: String = opt(&args, "--layout", "1v1".to_string())?;
            let layout = Layout::parse(&layout).ok_or("--layout: e.g. 1v2 or 1v1cal")?;
            let tau: f64 = opt(&args, "--tau", 0.0)?;
            let noise = Noise {
                tau,
                sigma,
                slow,
                grid: 0.0,
            };
            let change: f64 = opt(&args, "--change", 0.0)?;
            for i in 0..trials {
                let t = draw(layout, noise, change, &p, &mut rng);
                let report = compare_calibrated(&t.base, &t.new, &p.settings, &t.calibrations)
                    .map_err(|e| e.to_string())?;
                let line = serde_json::json!({
                    "trial": i,
                    "base": t.base,
                    "new": t.new,
                    "calibrations": t.calibrations,
                    "comparison": report.comparisons.first(),
                });
                println!("{line}");
            }
        }
        other => return Err(format!("--table {other}: main, ties or dump")),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("session_coverage: {e}");
            ExitCode::from(2)
        }
    }
}
