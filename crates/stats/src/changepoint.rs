//! Change points of a series: the indexes where its level steps, found deterministically by
//! split and merge, the method of Apache Otava (formerly Hunter).
//!
//! Source: Fleming, Rengifo, Ingo, Kuszmaul, Liu, Ortmann, "Hunter: Using Change Point Detection
//! to Hunt for Performance Regressions", ICPE 2023 (doi:10.1145/3578244.3583719), as implemented
//! in Apache Otava 0.8.0 (`otava/analysis.py`: `compute_change_points`, `split`, `merge`,
//! `TTestSignificanceTester`; `otava/change_point_divisive/`: `ChangePointDetector`,
//! `PairDistanceCalculator`). `tests/changepoint.rs` checks that this code finds Otava's change
//! points with Otava's p-values on the fixture `scripts/gen_changepoint_fixtures.py` writes.
//!
//! 1. **Split.** Windows of `window_len` points, advancing by half a window (or to the last
//!    change point found), are each divided recursively as E-Divisive does (Matteson & James,
//!    "A Nonparametric Approach for Multiple Change Point Analysis of Multivariate Data", JASA
//!    2014, arXiv:1306.4933): the candidate is the split `tau` (with an end `kappa`) of a
//!    piece that maximizes the energy statistic `Q(tau, kappa)` of the two parts, and it is
//!    kept while the parts differ significantly. Hunter replaced E-Divisive's permutation test
//!    by a t-test "because the randomized approach did not produce deterministic results";
//!    this first pass uses a relaxed threshold (ten times `max_pvalue` below 0.05), so it finds
//!    "weak" change points.
//! 2. **Merge.** Every weak change point is tested against its neighbouring segments; the one
//!    with the largest p-value above `max_pvalue` (or, once all pass, the smallest relative
//!    change not above `min_magnitude`) is removed and the tests next to it are redone, until
//!    every change point left passes.
//!
//! The test is Otava's: Student's two-sample t-test with a pooled variance (SciPy's
//! `ttest_ind_from_stats`, `equal_var=True`) fed with the population standard deviations of
//! the two segments (NumPy's `std`, ddof = 0), as Otava does. After removing a change point,
//! Otava redoes the tests of the next two change points to its right, not of the one to its
//! left (whose right segment grew); this code does the same, so its change points are Otava's.

use crate::distribution::t_sf;

use crate::error::{check, StatsError};

/// The knobs of [`change_points`], with Otava's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointSettings {
    /// Points per window of the split step (at least 2).
    pub window_len: usize,
    /// A change point is kept when the t-test of its neighbouring segments gives a p-value
    /// below this.
    pub max_pvalue: f64,
    /// Relative change (0.05 = 5%) at or below which a change point is removed even when
    /// significant; 0 keeps every significant one.
    pub min_magnitude: f64,
}

impl Default for ChangePointSettings {
    /// Otava's defaults: windows of 50 points, p < 0.001, no minimum magnitude.
    fn default() -> Self {
        ChangePointSettings {
            window_len: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
        }
    }
}

/// A change point: the series' level changes between `index - 1` and `index`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first point of the new level.
    pub index: usize,
    /// Two-sided p-value of the t-test of the segments on either side (from the previous
    /// change point, or the start, to the next, or the end). NaN when both are constant and
    /// equal.
    pub p_value: f64,
    pub mean_before: f64,
    pub mean_after: f64,
    /// Population standard deviations (ddof = 0) of the two segments.
    pub std_before: f64,
    pub std_after: f64,
}

impl ChangePoint {
    /// `max(|after/before - 1|, |before/after - 1|)`, Otava's magnitude (a zero denominator
    /// counts as no change).
    pub fn magnitude(&self) -> f64 {
        let forward = if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        };
        let backward = if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        };
        forward.abs().max(backward.abs())
    }
}

/// The change points of `series`, in index order.
///
/// Errors: a non-finite value, `window_len` below 2, `max_pvalue` outside (0, 1] or a
/// negative or non-finite `min_magnitude`. A series of fewer than 3 points has none.
pub fn change_points(
    series: &[f64],
    settings: &ChangePointSettings,
) -> Result<Vec<ChangePoint>, StatsError> {
    check(series, 0)?;
    if settings.window_len < 2 {
        return Err(StatsError::OutOfRange {
            what: "window length",
            range: "2 or more points",
            value: settings.window_len as f64,
        });
    }
    let p = settings.max_pvalue;
    if !(p > 0.0 && p <= 1.0) {
        return Err(StatsError::OutOfRange {
            what: "maximum p-value",
            range: "(0, 1]",
            value: p,
        });
    }
    let m = settings.min_magnitude;
    if !(m.is_finite() && m >= 0.0) {
        return Err(StatsError::OutOfRange {
            what: "minimum magnitude",
            range: "[0, inf)",
            value: m,
        });
    }
    // Otava's first-pass threshold (`compute_change_points`).
    let first_pass = if p < 0.05 {
        p * 10.0
    } else if p < 0.5 {
        p * 2.0
    } else {
        p
    };
    let weak = split(series, settings.window_len, first_pass);
    Ok(merge(weak, series, p, m))
}

/// Otava's `split`: E-Divisive in sliding windows, the union of what each window finds, each
/// then tested against its neighbouring segments in the whole series.
fn split(series: &[f64], window_len: usize, max_pvalue: f64) -> Vec<ChangePoint> {
    let step = window_len / 2;
    let mut indexes: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window_len).min(series.len());
        let found = divisive(&series[start..end], max_pvalue);
        let last = found.last().map_or(0, |i| i + start);
        for i in found {
            if !indexes.contains(&(i + start)) {
                indexes.push(i + start);
            }
        }
        start = last.max(start + step);
    }
    indexes.sort_unstable();
    (0..indexes.len())
        .map(|k| test_at(series, &indexes, k))
        .collect()
}

/// Otava's `merge`: removes the weakest change point until every one left is significant
/// and larger than `min_magnitude`.
fn merge(
    mut points: Vec<ChangePoint>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !points.is_empty() {
        // Python's max() and min(): the first extreme element, NaN never replacing one.
        let mut weakest = 0;
        for (k, c) in points.iter().enumerate().skip(1) {
            if c.p_value > points[weakest].p_value {
                weakest = k;
            }
        }
        if points[weakest].p_value < max_pvalue {
            weakest = 0;
            for (k, c) in points.iter().enumerate().skip(1) {
                if c.magnitude() < points[weakest].magnitude() {
                    weakest = k;
                }
            }
            if points[weakest].magnitude() > min_magnitude {
                return points;
            }
        }
        points.remove(weakest);
        let indexes: Vec<usize> = points.iter().map(|c| c.index).collect();
        for k in [weakest, weakest + 1] {
            if k < points.len() {
                points[k] = test_at(series, &indexes, k);
            }
        }
    }
    points
}

/// The t-test of change point `k` of the sorted `indexes` against its neighbouring segments.
fn test_at(series: &[f64], indexes: &[usize], k: usize) -> ChangePoint {
    let from = if k == 0 { 0 } else { indexes[k - 1] };
    let to = indexes.get(k + 1).copied().unwrap_or(series.len());
    t_test(
        &series[from..indexes[k]],
        &series[indexes[k]..to],
        indexes[k],
    )
}

/// E-Divisive with Otava's t-test inside one window: splits the piece with the best
/// candidate while the split is significant. Returns window-local indexes, sorted.
fn divisive(window: &[f64], max_pvalue: f64) -> Vec<usize> {
    let mut found: Vec<usize> = Vec::new();
    loop {
        let bounds = segments(&found, window.len());
        // The best candidate of the pieces of more than one point; the first of equal ones.
        let mut best: Option<(usize, f64, (usize, usize))> = None;
        for &(from, to) in bounds.iter().filter(|(from, to)| to - from > 1) {
            let (index, qhat) = candidate(&window[from..to]);
            if best.is_none_or(|(_, q, _)| qhat > q) {
                best = Some((index + from, qhat, (from, to)));
            }
        }
        let Some((index, _, (from, to))) = best else {
            return found;
        };
        let c = t_test(&window[from..index], &window[index..to], index);
        if c.p_value <= max_pvalue {
            found.push(index);
            found.sort_unstable();
        } else {
            return found;
        }
    }
}

/// The non-empty segments `[from, to)` between sorted change points.
fn segments(indexes: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut bounds = Vec::with_capacity(indexes.len() + 1);
    let mut from = 0;
    for &i in indexes.iter().chain(std::iter::once(&len)) {
        if i != from {
            bounds.push((from, i));
        }
        from = i;
    }
    bounds
}

/// The split of `z` (at least 2 points) that maximizes Matteson and James's divergence
/// `Q(tau, kappa)` between `z[..tau]` and `z[tau..kappa]` (exponent 1):
///
/// `Q = 2/(m+n) sum|x-y| - 2m/((m+n)(n-1)) sum_{i<k}|x_i-x_k| - 2n/((m+n)(m-1)) sum_{j<k}|y_j-y_k|`
///
/// with `n = tau`, `m = kappa - tau` (a term with a zero denominator is 0). Otava evaluates it
/// as a matrix over `(tau - 1, kappa - 2)` whose lower triangle (no split) holds zeros, and
/// takes NumPy's argmax (the first maximum in row order); the same order is kept here, zeros
/// included, so ties and all-negative divergences resolve as Otava's do. Returns `(tau, Q)`.
fn candidate(z: &[f64]) -> (usize, f64) {
    let n = z.len();
    let mut best = (1, f64::NEG_INFINITY);
    // within_x: sum of |x_i - x_k| over pairs of z[..tau], updated as tau grows.
    let mut within_x = 0.0;
    for tau in 1..n {
        if tau > 1 {
            within_x += z[..tau - 1]
                .iter()
                .map(|x| (x - z[tau - 1]).abs())
                .sum::<f64>();
        }
        let mut cross = 0.0;
        let mut within_y = 0.0;
        for kappa in 2..=n {
            let q = if kappa <= tau {
                0.0
            } else {
                let y = z[kappa - 1];
                cross += z[..tau].iter().map(|x| (x - y).abs()).sum::<f64>();
                within_y += z[tau..kappa - 1].iter().map(|v| (v - y).abs()).sum::<f64>();
                let (nx, my) = (tau as f64, (kappa - tau) as f64);
                let total = nx + my;
                let mut q = 2.0 / total * cross;
                if tau > 1 {
                    q -= 2.0 * my / (total * (nx - 1.0)) * within_x;
                }
                if kappa - tau > 1 {
                    q -= 2.0 * nx / (total * (my - 1.0)) * within_y;
                }
                q
            };
            if q > best.1 {
                best = (tau, q);
            }
        }
    }
    best
}

/// Otava's `TTestSignificanceTester.compare`: Student's t-test with a pooled variance of the
/// population standard deviations, two-sided; p = 1 for a single point a side.
fn t_test(left: &[f64], right: &[f64], index: usize) -> ChangePoint {
    let moments = |xs: &[f64]| {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let std = if xs.len() >= 2 {
            (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt()
        } else {
            0.0
        };
        (n, mean, std)
    };
    let (n1, mean_before, std_before) = moments(left);
    let (n2, mean_after, std_after) = moments(right);
    let p_value = if left.len() + right.len() > 2 {
        let df = n1 + n2 - 2.0;
        let pooled =
            ((n1 - 1.0) * std_before * std_before + (n2 - 1.0) * std_after * std_after) / df;
        let t = (mean_before - mean_after) / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
        if t.is_nan() {
            f64::NAN
        } else if t.is_infinite() {
            0.0
        } else {
            // df >= 1 here, so the distribution exists.
            t_sf(t.abs(), df).map_or(f64::NAN, |sf| 2.0 * sf)
        }
    } else {
        1.0
    };
    ChangePoint {
        index,
        p_value,
        mean_before,
        mean_after,
        std_before,
        std_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The divergence straight from its definition, for checking the incremental sums.
    fn q_direct(z: &[f64], tau: usize, kappa: usize) -> f64 {
        let (x, y) = (&z[..tau], &z[tau..kappa]);
        let (n, m) = (x.len() as f64, y.len() as f64);
        let cross: f64 = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| (a - b).abs()))
            .sum();
        let pairs = |s: &[f64]| -> f64 {
            (0..s.len())
                .flat_map(|i| (i + 1..s.len()).map(move |k| (i, k)))
                .map(|(i, k)| (s[i] - s[k]).abs())
                .sum()
        };
        let mut q = 2.0 / (m + n) * cross;
        if x.len() > 1 {
            q -= 2.0 * m / ((m + n) * (n - 1.0)) * pairs(x);
        }
        if y.len() > 1 {
            q -= 2.0 * n / ((m + n) * (m - 1.0)) * pairs(y);
        }
        q
    }

    #[test]
    fn candidate_maximizes_the_divergence() {
        let z = [1.0, 1.2, 0.9, 1.1, 3.0, 3.2, 2.9, 3.1, 3.0];
        let mut best = (0, f64::NEG_INFINITY);
        for tau in 1..z.len() {
            for kappa in tau + 1..=z.len() {
                let q = q_direct(&z, tau, kappa);
                if q > best.1 {
                    best = (tau, q);
                }
            }
        }
        let (tau, q) = candidate(&z);
        assert_eq!(tau, 4);
        assert_eq!(tau, best.0);
        assert!(
            (q - best.1).abs() < 1e-12 * best.1.abs(),
            "{q} vs {}",
            best.1
        );
    }

    #[test]
    fn a_clean_step_is_found_and_a_flat_series_has_none() {
        let mut series = vec![10.0; 20];
        series.extend([11.0; 20]);
        let found = change_points(&series, &ChangePointSettings::default()).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].index, 20);
        assert_eq!(found[0].p_value, 0.0);
        assert!((found[0].magnitude() - 0.1).abs() < 1e-12);
        let flat = change_points(&[5.0; 30], &ChangePointSettings::default()).unwrap();
        assert!(flat.is_empty());
        assert!(change_points(&[], &ChangePointSettings::default())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn bad_settings_and_values_are_errors() {
        let ok = ChangePointSettings::default();
        for bad in [
            ChangePointSettings {
                window_len: 1,
                ..ok
            },
            ChangePointSettings {
                max_pvalue: 0.0,
                ..ok
            },
            ChangePointSettings {
                max_pvalue: f64::NAN,
                ..ok
            },
            ChangePointSettings {
                min_magnitude: -0.1,
                ..ok
            },
        ] {
            assert!(matches!(
                change_points(&[1.0, 2.0, 3.0], &bad),
                Err(StatsError::OutOfRange { .. })
            ));
        }
        assert!(matches!(
            change_points(&[1.0, f64::NAN], &ok),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
    }
}
