//! Fewer marks for long series, for display only: a figure of 10,000 runs or of a monitor
//! sampled every 10 ms for an hour would otherwise be megabytes of SVG that a browser draws
//! slowly, with no more to see. Statistics are never computed from thinned data; every median,
//! interval and quartile a figure draws comes from the full sample (`vernier_analysis`).

/// Dots per box or series of runs beyond which the dots are an even subsample.
pub const MAX_DOTS: usize = 500;

/// Points per line beyond which the line is thinned by [`min_max`].
pub const MAX_LINE_POINTS: usize = 800;

/// Lines (runs) per monitor panel beyond which an evenly spaced subset is drawn.
pub const MAX_RUNS_DRAWN: usize = 40;

/// Points of all the lines of one panel together: a panel about 1,200 pixels wide shows no
/// more, and a figure of many panels stays a few megabytes at most.
pub const PANEL_POINTS: usize = 4_000;

/// The points each of `lines` lines of one panel may keep: their share of [`PANEL_POINTS`],
/// at least 100 (a line must keep its shape) and at most [`MAX_LINE_POINTS`].
pub fn per_line(lines: usize) -> usize {
    (PANEL_POINTS / lines.max(1)).clamp(100, MAX_LINE_POINTS)
}

/// At most `max` items of `items`, evenly spaced and always including the first and the last
/// (all of them when there are no more than `max`).
pub fn even<T: Clone>(items: &[T], max: usize) -> Vec<T> {
    let n = items.len();
    if n <= max || max < 2 {
        return items.to_vec();
    }
    (0..max)
        .map(|i| items[i * (n - 1) / (max - 1)].clone())
        .collect()
}

/// A line of `points` (x ascending) in at most about `max` points: the points are cut into
/// `max / 2` consecutive buckets and each bucket keeps its lowest and highest point in x
/// order, so spikes stay visible (the "min-max" decimation of plotting tools).
pub fn min_max(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    let n = points.len();
    let buckets = max / 2;
    if n <= max || buckets == 0 {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity(2 * buckets);
    for b in 0..buckets {
        let slice = &points[b * n / buckets..(b + 1) * n / buckets];
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in slice.iter().enumerate() {
            if p.1 < slice[lo].1 {
                lo = i;
            }
            if p.1 > slice[hi].1 {
                hi = i;
            }
        }
        out.push(slice[lo.min(hi)]);
        if lo != hi {
            out.push(slice[lo.max(hi)]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_keeps_the_ends_and_the_count() {
        let items: Vec<u32> = (0..1000).collect();
        let kept = even(&items, 10);
        assert_eq!(kept.len(), 10);
        assert_eq!((kept[0], kept[9]), (0, 999));
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(even(&items[..5], 10), items[..5].to_vec());
    }

    #[test]
    fn a_panel_shares_its_points_among_its_lines() {
        assert_eq!(per_line(1), MAX_LINE_POINTS);
        assert_eq!(per_line(40), 100);
        assert_eq!(per_line(1_000), 100);
    }

    #[test]
    fn min_max_keeps_a_single_spike() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (f64::from(i), 1.0)).collect();
        points[7_777].1 = 50.0;
        points[1_234].1 = -3.0;
        let thin = min_max(&points, 200);
        assert!(thin.len() <= 200);
        assert!(thin.contains(&(7_777.0, 50.0)));
        assert!(thin.contains(&(1_234.0, -3.0)));
        assert!(thin.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
