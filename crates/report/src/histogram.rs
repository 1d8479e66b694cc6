//! A terminal histogram with the cumulative distribution drawn in the same rows, after the
//! kernel microbenchmark write-up in the project's sources: `▒` is the share of values in a
//! bucket, `░` continues the bar up to the cumulative share, the count is on the right.

use crate::format::sig;

/// Renders `values` in `buckets` equal-width buckets, bars `width` characters wide.
/// Returns an empty string when there are no values.
pub fn histogram(values: &[f64], buckets: usize, width: usize) -> String {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() || buckets == 0 || width == 0 {
        return String::new();
    }
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let buckets = if max > min { buckets } else { 1 };
    let step = (max - min) / buckets as f64;
    let mut counts = vec![0usize; buckets];
    for v in &finite {
        let i = if step > 0.0 {
            (((v - min) / step) as usize).min(buckets - 1)
        } else {
            0
        };
        counts[i] += 1;
    }
    let rows: Vec<(String, u64)> = (0..buckets)
        .map(|i| sig(min + step * i as f64, 4))
        .zip(counts.iter().map(|&c| c as u64))
        .collect();
    bars(&rows, width)
}

/// Rows of (label, count) as bars `width` characters wide: `▒` the row's share of all counts,
/// `░` continuing the bar up to the cumulative share (the CDF), the count on the right: the
/// distribution and its CDF in one graph, as the kernel microbenchmark write-up draws them.
pub fn bars(rows: &[(String, u64)], width: usize) -> String {
    let total = rows.iter().map(|(_, c)| c).sum::<u64>().max(1) as f64;
    let label_width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let count_width = rows
        .iter()
        .map(|(_, c)| c.to_string().len())
        .max()
        .unwrap_or(1)
        .max(5);
    let mut out = format!(
        "{:>lw$} │{:^w$}│ {:>cw$}\n",
        "value",
        "▒ share  ░ cumulative",
        "count",
        lw = label_width,
        w = width,
        cw = count_width
    );
    let mut cumulative = 0u64;
    for (label, count) in rows {
        cumulative += count;
        let bar = ((*count as f64 / total) * width as f64).round() as usize;
        let cdf = ((cumulative as f64 / total) * width as f64).round() as usize;
        let bar = bar.min(width);
        let cdf = cdf.clamp(bar, width);
        out.push_str(&format!(
            "{:>lw$} │{}{}{}│ {:>cw$}\n",
            label,
            "▒".repeat(bar),
            "░".repeat(cdf - bar),
            " ".repeat(width - cdf),
            count,
            lw = label_width,
            cw = count_width
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_counts_and_cumulative_bars() {
        let values = [1.0, 1.0, 2.0, 4.0];
        let text = histogram(&values, 3, 8);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4);
        // Bucket 1: two of four values: 4 of 8 cells share, cumulative 4.
        assert!(rows[1].contains("│▒▒▒▒    │"), "{}", rows[1]);
        // Bucket 2: one value (2.0): 2 share cells after 4 cumulative cells.
        assert!(rows[2].contains("│▒▒░░░░  │"), "{}", rows[2]);
        assert!(rows[3].ends_with("1"), "{}", rows[3]);
        assert!(rows[3].contains("│▒▒░░░░░░│"), "{}", rows[3]);
    }

    #[test]
    fn single_value_and_empty() {
        assert_eq!(histogram(&[], 10, 20), "");
        let text = histogram(&[3.0, 3.0], 10, 10);
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("▒▒▒▒▒▒▒▒▒▒"));
    }
}
