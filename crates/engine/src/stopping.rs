//! The stopping rule (PRODUCT.md, "Principles of accuracy"): estimate the median, take its
//! distribution-free 95% CI from order statistics, and stop when the CI half-width relative to
//! the median is at most the target, once the minimum runs and time are done. Otherwise stop at
//! the maximum runs or time and record that the configuration did not converge.

use vernier_model::{Settings, StopReason};
use vernier_stats::{median, median_ci, Interval};

/// Confidence level of the stopping rule's interval.
pub const LEVEL: f64 = 0.95;

/// The precision reached so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    pub n: usize,
    pub median: Option<f64>,
    pub ci: Option<Interval>,
    /// Half-width of the CI relative to the median; `None` while n is too small for a CI.
    pub relative_half_width: Option<f64>,
}

/// Computes the precision of a configuration's measured values.
pub fn precision(values: &[f64]) -> Precision {
    let median = median(values).ok();
    let ci = median_ci(values, LEVEL).ok().flatten();
    let relative_half_width = match (median, ci) {
        (Some(m), Some(ci)) if m != 0.0 => Some(ci.relative_half_width(m)),
        (Some(_), Some(ci)) if ci.high == ci.low => Some(0.0),
        (Some(_), Some(_)) => Some(f64::INFINITY),
        _ => None,
    };
    Precision {
        n: values.len(),
        median,
        ci,
        relative_half_width,
    }
}

/// How long a configuration has taken so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Elapsed {
    /// Wall time of the measured runs, in seconds.
    pub measured_s: f64,
    /// Wall time of all its runs, warmups included, in seconds.
    pub total_s: f64,
    /// Mean wall time of one run, the estimate of the next run's duration.
    pub mean_run_s: f64,
}

/// Whether to run again. `None` means continue.
pub fn decide(values: &[f64], elapsed: Elapsed, settings: &Settings) -> Option<StopReason> {
    let n = values.len() as u32;
    if n < settings.min_runs {
        return None;
    }
    let p = precision(values);
    let precise = p.relative_half_width.is_some_and(|w| w <= settings.target);
    if precise && elapsed.measured_s >= settings.min_time_s {
        return Some(StopReason::Converged);
    }
    if n >= settings.max_runs {
        return Some(StopReason::MaxRuns);
    }
    // Stop before a run that would end past the time limit, so the bound holds as a bound.
    if elapsed.total_s + elapsed.mean_run_s > settings.max_time_s {
        return Some(StopReason::MaxTime);
    }
    None
}

/// Estimated further runs until the target is met, assuming the CI narrows as 1/sqrt(n).
pub fn estimated_remaining_runs(values: &[f64], settings: &Settings) -> u32 {
    let n = values.len() as u32;
    let floor = settings.min_runs.saturating_sub(n);
    let needed = match precision(values).relative_half_width {
        Some(w) if w.is_finite() && w > settings.target => {
            let total = (f64::from(n) * (w / settings.target).powi(2)).ceil();
            total.min(f64::from(settings.max_runs)) as u32
        }
        Some(_) => n,
        None => settings.min_runs.max(6),
    };
    needed.saturating_sub(n).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            target: 0.02,
            min_runs: 6,
            max_runs: 10,
            min_time_s: 0.0,
            max_time_s: 100.0,
            ..Settings::default()
        }
    }

    fn elapsed(n: usize) -> Elapsed {
        Elapsed {
            measured_s: n as f64,
            total_s: n as f64 + 1.0,
            mean_run_s: 1.0,
        }
    }

    #[test]
    fn continues_below_min_runs_even_when_identical() {
        let v = [1.0; 5];
        assert_eq!(decide(&v, elapsed(5), &settings()), None);
    }

    #[test]
    fn converges_when_ci_is_narrow() {
        // n = 6: CI = [min, max] = [99, 101]; half-width 1 / median 100 = 1% <= 2%.
        let v = [100.0, 99.0, 101.0, 100.0, 100.5, 99.5];
        assert_eq!(
            decide(&v, elapsed(6), &settings()),
            Some(StopReason::Converged)
        );
        let p = precision(&v);
        assert_eq!(p.ci.map(|c| (c.low, c.high)), Some((99.0, 101.0)));
        assert!((p.relative_half_width.unwrap() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn wide_ci_continues_then_hits_max_runs() {
        // [90, 110] around 100: 10% > 2%.
        let v = [100.0, 90.0, 110.0, 100.0, 95.0, 105.0];
        assert_eq!(decide(&v, elapsed(6), &settings()), None);
        let ten = [
            100.0, 90.0, 110.0, 100.0, 95.0, 105.0, 90.0, 110.0, 91.0, 109.0,
        ];
        assert_eq!(
            decide(&ten, elapsed(10), &settings()),
            Some(StopReason::MaxRuns)
        );
    }

    #[test]
    fn min_time_delays_convergence_and_max_time_bounds() {
        let v = [100.0; 6];
        let s = Settings {
            min_time_s: 10.0,
            ..settings()
        };
        assert_eq!(decide(&v, elapsed(6), &s), None);
        let s = Settings {
            max_time_s: 7.5,
            ..s
        };
        // 7 s spent + 1 s expected next run > 7.5 s.
        assert_eq!(decide(&v, elapsed(6), &s), Some(StopReason::MaxTime));
    }

    #[test]
    fn remaining_runs_scale_with_precision() {
        let v = [100.0, 96.0, 104.0, 100.0, 98.0, 102.0]; // 4% half-width: needs ~4x the runs
        assert_eq!(estimated_remaining_runs(&v, &settings()), 4); // capped at max_runs 10
        assert_eq!(estimated_remaining_runs(&[1.0, 2.0], &settings()), 4);
        assert_eq!(estimated_remaining_runs(&[100.0; 6], &settings()), 0);
    }
}
