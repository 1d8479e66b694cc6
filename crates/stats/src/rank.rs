//! Ranks with ties averaged (`scipy.stats.rankdata(method="average")`), shared by the rank
//! tests and the rank correlation.

/// Ranks (1-based, ties get the mean of the ranks they span) and the sizes of the tie groups
/// with more than one member. Input must be finite (checked by the caller).
pub(crate) fn average_ranks(xs: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut ties = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && xs[order[end]] == xs[order[start]] {
            end += 1;
        }
        // Positions start..end hold equal values: ranks start+1 ..= end, mean (start+1+end)/2.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        if end - start > 1 {
            ties.push(end - start);
        }
        start = end;
    }
    (ranks, ties)
}

/// `sum(t^3 - t)` over tie groups: the tie correction of rank-statistic variances
/// (Hollander & Wolfe, *Nonparametric Statistical Methods*, 3rd ed., eq. 4.13).
pub(crate) fn tie_term(ties: &[usize]) -> f64 {
    ties.iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_average_ties() {
        // scipy.stats.rankdata([10, 20, 10, 30, 20, 20]) == [1.5, 4, 1.5, 6, 4, 4]
        let (r, t) = average_ranks(&[10.0, 20.0, 10.0, 30.0, 20.0, 20.0]);
        assert_eq!(r, vec![1.5, 4.0, 1.5, 6.0, 4.0, 4.0]);
        assert_eq!(t, vec![2, 3]);
        assert_eq!(tie_term(&t), 6.0 + 24.0);
    }

    #[test]
    fn ranks_without_ties() {
        let (r, t) = average_ranks(&[3.0, 1.0, 2.0]);
        assert_eq!(r, vec![3.0, 1.0, 2.0]);
        assert!(t.is_empty());
    }
}
