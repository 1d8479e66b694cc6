//! The glossary: what each word of a verdict or a warning means, one entry per word, each with
//! an id that the verdicts of every page link to (`glossary.html#inconclusive`).

use maud::{html, Markup};

use super::nav;
use crate::html;
use crate::Site;

/// The words explained, by id: (id, word, explanation). The verdicts first, in the order the
/// summaries count them, then the words of the warnings and the statistics.
pub const ENTRIES: &[(&str, &str, &str)] = &[
    (
        "faster",
        "faster",
        "NEW is better than BASE by more than the threshold (a shorter time, a higher rate): \
         the whole interval of the ratio NEW/BASE lies beyond the band of no practical change, \
         on the better side.",
    ),
    (
        "slower",
        "slower",
        "NEW is worse than BASE by more than the threshold (a longer time, a lower rate): the \
         whole interval of the ratio lies beyond the band, on the worse side. A regression.",
    ),
    (
        "equivalent",
        "equivalent",
        "The whole interval of the ratio lies within the band of no practical change (±2% by \
         default, --threshold): whatever changed, it changed by less than the threshold, with \
         the interval's confidence. Not the same as inconclusive.",
    ),
    (
        "inconclusive",
        "inconclusive",
        "Neither faster, slower nor equivalent: the interval reaches across a boundary of the \
         band (the change may be smaller or larger than the threshold), or there is no \
         interval (too few runs or sessions, ties). More runs or sessions narrow the interval; \
         the MDC says how large a change these runs could have shown. It does not say that \
         nothing changed.",
    ),
    (
        "withheld",
        "withheld",
        "An inconclusive verdict that would have been faster or slower, but some of its runs \
         were contaminated: other work used the CPU while they ran, so the interval does not \
         describe the machine at rest. Run again on a quiet machine.",
    ),
    (
        "contaminated",
        "contaminated",
        "A run during which other processes used noticeable CPU time (the tolerance of vernier \
         show). Its value is kept, but a verdict that rests on such runs is withheld.",
    ),
    (
        "unreachable",
        "unreachable",
        "The configuration stopped before its target precision because, projected from the \
         spread of its runs, the target was out of reach within the runs and time allowed.",
    ),
    (
        "mdc",
        "MDC",
        "Minimum detectable change: the smallest change (in percent) that this comparison \
         reports as faster or slower with 80% probability. An inconclusive verdict with an MDC \
         of 30% says the runs could not have shown a change of 10%.",
    ),
    (
        "threshold",
        "threshold",
        "The practical threshold (2% by default, --threshold): changes smaller than it do not \
         matter. Its band of no practical change is [1/(1+t), 1+t] on the ratio.",
    ),
    (
        "interval",
        "interval",
        "The confidence interval of the ratio NEW/BASE (95%), shown as changes in percent: \
         +15.0% [+12.1%, +18.0%] means NEW's values are 15% larger, and the interval's range \
         would hold the true change in 95% of repetitions. With one session a side it \
         includes the session-to-session noise of the machine (vernier calibrate, or 5% by \
         default); with several sessions it is Student's t on the sessions' medians.",
    ),
    (
        "change",
        "change",
        "The ratio NEW/BASE as a percentage: +19.0% is a ratio of 1.190. For a time that is \
         slower, for a rate faster; the verdict says which.",
    ),
    (
        "geomean",
        "geometric mean",
        "The geometric mean of the ratios of the configurations that have an interval, with \
         its own interval: the suite's change as one number. Absent when times and rates are \
         mixed.",
    ),
    (
        "p-adjusted",
        "p (adjusted)",
        "The Mann-Whitney U test's p-value of the runs, adjusted for the number of comparisons \
         (Benjamini-Hochberg). The verdict does not use it; the interval does the deciding.",
    ),
];

/// A verdict word linked to its entry; the word is shown as given.
pub fn word(root: &str, id: &str, text: &str) -> Markup {
    html! { a.verdict.(id) href={ (root) "glossary.html#" (id) } { (text) } }
}

pub fn glossary(site: &Site) -> String {
    let body = html! {
        p {
            "The words of the verdicts and warnings, as " code { "vernier compare" }
            " uses them; docs/compare.md has the statistics."
        }
        dl.glossary {
            @for (id, word, text) in ENTRIES {
                dt id=(id) { (word) }
                dd { (text) }
            }
        }
    };
    html::page("", "Glossary", &nav(site), &body)
}
