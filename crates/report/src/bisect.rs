//! The words of a bisection (`vernier bisect status` and `report`, and the site's bisection
//! pages): its commits by their short hash, its differences as signed percentages, and how it
//! ended.

use vernier_analysis::bisect::{BisectState, Difference, Outcome};

/// A commit's first 12 characters, as the bisection names commits.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// A difference as a signed change in percent with its interval: `+10.2% [+8.9%, +11.5%]`.
pub fn percent(d: &Difference, higher_is_better: bool) -> String {
    let (r, lo, hi) = d.ratio(higher_is_better);
    format!(
        "{:+.1}% [{:+.1}%, {:+.1}%]",
        (r - 1.0) * 100.0,
        (lo - 1.0) * 100.0,
        (hi - 1.0) * 100.0
    )
}

/// A probability close to 1 in percent, with the digits that tell it from 1: `99.2%`,
/// `99.97%`, and `>99.99%` beyond.
pub fn confidence_percent(p: f64) -> String {
    let miss = (1.0 - p) * 100.0;
    if miss < 0.005 {
        ">99.99%".to_string()
    } else if miss < 0.1 {
        format!("{:.2}%", p * 100.0)
    } else {
        format!("{:.1}%", p * 100.0)
    }
}

/// How the bisection ended, or what it measures next: one or two lines.
pub fn outcome(st: &BisectState) -> Vec<String> {
    let hib = st.higher_is_better;
    match &st.plan.outcome {
        Outcome::Measure { index } => vec![format!(
            "next: a session at {} (commit {index}); `vernier bisect resume` continues",
            short(st.commit(*index))
        )],
        Outcome::Found {
            first_bad,
            last_good,
            effect,
            share,
            partial,
        } => {
            let decided = st.plan.steps.iter().filter(|s| s.error.is_some()).count();
            vec![
                format!(
                    "first bad commit: {} (commit {first_bad}): {} against {} (commit \
                     {last_good}), {:.0}% of the regression{}",
                    st.commit(*first_bad),
                    percent(effect, hib),
                    short(st.commit(*last_good)),
                    share * 100.0,
                    if *partial {
                        "; it explains only part of it: another commit explains the rest"
                    } else {
                        ""
                    }
                ),
                match st.plan.confidence {
                    Some(c) => format!(
                        "confidence: {} that this is the first bad commit (each of the \
                         {decided} calls that led to it right; docs/bisect.md, \"Confidence\")",
                        confidence_percent(c)
                    ),
                    None => format!("confidence: {decided} calls led to it"),
                },
            ]
        }
        Outcome::BudgetSpent {
            last_good,
            first_bad,
        } => vec![format!(
            "budget spent: the first bad commit is after {} (commit {last_good}) and at or \
             before {} (commit {first_bad})",
            short(st.commit(*last_good)),
            short(st.commit(*first_bad))
        )],
        Outcome::Skipped {
            last_good,
            first_bad,
        } => vec![format!(
            "every commit between {} (commit {last_good}) and {} (commit {first_bad}) was \
             skipped: the first bad commit is one of them or the latter",
            short(st.commit(*last_good)),
            short(st.commit(*first_bad))
        )],
        Outcome::NoRegression => vec![
            "no regression: the bad end is not worse than the good end beyond the threshold \
             with 95% confidence"
                .to_string(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confidence_keeps_the_digits_that_tell_it_from_certainty() {
        assert_eq!(confidence_percent(0.9234), "92.3%");
        assert_eq!(confidence_percent(0.9992), "99.92%");
        assert_eq!(confidence_percent(0.999_999), ">99.99%");
    }
}
