//! Episodes of a series: a run of consecutive points at another level than the points around
//! it, that came and went (an *epidemic* change: Levin & Kline, "The CUSUM test of homogeneity
//! with an application in spontaneous abortion epidemiology", Statistics in Medicine 1985;
//! Yao, "Tests for change-points with epidemic alternatives", Biometrika 1993).
//!
//! Binary segmentation (E-Divisive, and Otava's split of [`crate::change_points`]) tests one
//! split of a piece at a time: a short episode inside a long piece is averaged into one side
//! of every split, so it rarely reaches significance, and a regression that lasted a few
//! nights and was fixed leaves no change point. Here every interval of `min_len..=max_len`
//! points with at least `margin` points on either side is tested against the rest of the
//! piece with Student's pooled t-test, the p-value multiplied by the number of intervals
//! tested (Bonferroni); the strongest interval is kept while one passes `max_pvalue`, and the
//! points it holds leave the rest for the next round.
//!
//! A single wild point is not an episode: `min_len` is 2, and every point of an interval must
//! lie on the interval's side of the rest by at least half the interval's shift, so one wild
//! point with an ordinary neighbour does not pass.

use crate::distribution::t_sf;
use crate::error::{check, StatsError};

/// The knobs of [`episodes`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeSettings {
    /// Fewest points of an episode (2: a single point is an outlier, not an episode).
    pub min_len: usize,
    /// Most points of an episode; a longer one is two change points.
    pub max_len: usize,
    /// Fewest points on each side of an episode: that the level came back is itself measured.
    pub margin: usize,
    /// An episode is kept when its Bonferroni-adjusted p-value is below this.
    pub max_pvalue: f64,
}

impl Default for EpisodeSettings {
    /// Episodes of 2 to 10 points with 2 on each side, p < 0.001 after adjustment (the change
    /// points' default significance).
    fn default() -> Self {
        EpisodeSettings {
            min_len: 2,
            max_len: 10,
            margin: 2,
            max_pvalue: 0.001,
        }
    }
}

/// Points `start..end` of the series stand apart from the rest of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Episode {
    pub start: usize,
    /// One past the last point.
    pub end: usize,
    /// The t-test's p-value times the number of intervals tested (at most 1).
    pub p_value: f64,
    pub mean_inside: f64,
    /// Mean of the other points of the series that no earlier episode holds.
    pub mean_outside: f64,
}

/// The episodes of `xs`, strongest first. Needs `2 * margin + min_len` finite points, else
/// there is none.
pub fn episodes(xs: &[f64], settings: &EpisodeSettings) -> Result<Vec<Episode>, StatsError> {
    check(xs, 0)?;
    let EpisodeSettings {
        min_len,
        max_len,
        margin,
        max_pvalue,
    } = *settings;
    let min_len = min_len.max(2);
    let n = xs.len();
    if max_len < min_len || n < 2 * margin + min_len {
        return Ok(Vec::new());
    }
    let tested = candidates(n, min_len, max_len, margin).count() as f64;
    let mut taken = vec![false; n];
    let mut found = Vec::new();
    loop {
        let free: Vec<(usize, f64)> = (0..n).filter(|&i| !taken[i]).map(|i| (i, xs[i])).collect();
        let mut best: Option<Episode> = None;
        for (start, end) in candidates(n, min_len, max_len, margin) {
            if taken[start..end].iter().any(|&t| t) {
                continue;
            }
            let inside = &xs[start..end];
            let outside: Vec<f64> = free
                .iter()
                .filter(|(i, _)| *i < start || *i >= end)
                .map(|&(_, x)| x)
                .collect();
            let Some((p, mean_inside, mean_outside)) = pooled_t_test(inside, &outside) else {
                continue;
            };
            let shift = mean_inside - mean_outside;
            // Every point of the episode is on its side by at least half the shift.
            if shift == 0.0
                || inside
                    .iter()
                    .any(|x| (x - mean_outside) * shift < 0.5 * shift * shift)
            {
                continue;
            }
            let p_value = (p * tested).min(1.0);
            if p_value < max_pvalue && best.is_none_or(|b| p_value < b.p_value) {
                best = Some(Episode {
                    start,
                    end,
                    p_value,
                    mean_inside,
                    mean_outside,
                });
            }
        }
        let Some(e) = best else { break };
        taken[e.start..e.end].iter_mut().for_each(|t| *t = true);
        found.push(e);
    }
    Ok(found)
}

/// The intervals tested: `min_len..=max_len` points with `margin` points on either side.
fn candidates(
    n: usize,
    min_len: usize,
    max_len: usize,
    margin: usize,
) -> impl Iterator<Item = (usize, usize)> {
    (margin..n.saturating_sub(margin + min_len - 1)).flat_map(move |start| {
        (start + min_len..=(start + max_len).min(n - margin)).map(move |end| (start, end))
    })
}

/// Student's two-sample t-test with a pooled variance (sample variances), two-sided:
/// `(p, mean_a, mean_b)`; none with fewer than two points a side or no spread and no shift.
fn pooled_t_test(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let moments = |xs: &[f64]| {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let ss = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
        (n, mean, ss)
    };
    let (na, ma, ssa) = moments(a);
    let (nb, mb, ssb) = moments(b);
    let df = na + nb - 2.0;
    let pooled = (ssa + ssb) / df;
    let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
    if se == 0.0 {
        return (ma != mb).then_some((0.0, ma, mb));
    }
    let t = (ma - mb) / se;
    let p = 2.0 * t_sf(t.abs(), df).ok()?;
    Some((p, ma, mb))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::SeededRng;

    /// `n` points of relative noise `sd` around 1, with `shift` added to `start..end`.
    fn series(rng: &mut SeededRng, n: usize, sd: f64, episode: (usize, usize, f64)) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let level = if i >= episode.0 && i < episode.1 {
                    episode.2
                } else {
                    0.0
                };
                level + sd * rng.normal()
            })
            .collect()
    }

    #[test]
    fn a_short_regression_that_was_fixed_is_found_where_it_was() {
        let mut rng = SeededRng::new(7);
        for (len, shift) in [(2, 0.10), (4, 0.10), (8, 0.20)] {
            let xs = series(&mut rng, 40, 0.01, (20, 20 + len, shift));
            let found = episodes(&xs, &EpisodeSettings::default()).unwrap();
            assert_eq!(found.len(), 1, "{len} {shift}: {found:?}");
            assert_eq!((found[0].start, found[0].end), (20, 20 + len), "{found:?}");
            assert!(found[0].mean_inside - found[0].mean_outside > 0.05);
        }
    }

    #[test]
    fn one_wild_point_and_plain_noise_are_no_episode() {
        let mut rng = SeededRng::new(11);
        let mut false_alarms = 0;
        for _ in 0..200 {
            let mut xs = series(&mut rng, 40, 0.01, (0, 0, 0.0));
            xs[17] += 0.3;
            false_alarms += episodes(&xs, &EpisodeSettings::default()).unwrap().len();
        }
        assert!(false_alarms <= 2, "{false_alarms} episodes in 200 series");
    }

    #[test]
    fn two_episodes_are_both_found() {
        let mut rng = SeededRng::new(3);
        let mut xs = series(&mut rng, 60, 0.01, (10, 13, 0.1));
        for x in &mut xs[40..45] {
            *x -= 0.08;
        }
        let mut found = episodes(&xs, &EpisodeSettings::default()).unwrap();
        found.sort_by_key(|e| e.start);
        let spans: Vec<(usize, usize)> = found.iter().map(|e| (e.start, e.end)).collect();
        assert_eq!(spans, vec![(10, 13), (40, 45)]);
    }

    #[test]
    fn too_short_a_series_has_none() {
        assert!(
            episodes(&[1.0, 2.0, 2.0, 1.0, 1.0], &EpisodeSettings::default())
                .unwrap()
                .is_empty()
        );
        assert!(episodes(&[1.0, f64::NAN], &EpisodeSettings::default()).is_err());
    }
}
