//! The differential profiles of `compare` (`vernier_analysis::profile`) as text and Markdown:
//! per configuration profiled on both sides, the functions whose share of the samples changed
//! most, self and inclusive, as "kmem_cache_alloc_[k]  +6.1 points [4.8, 7.5]".

use vernier_analysis::profile::{FunctionChange, ProfileComparison, ProfiledRuns};
use vernier_model::level_percent;

use crate::markup::{Align, Markup};
use crate::table::columns;

/// How many functions of each kind the terminal and Markdown show.
pub const SHOWN: usize = 5;

fn points(v: f64) -> String {
    format!("{v:+.1}")
}

fn share(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn row(kind: &str, c: &FunctionChange) -> Vec<String> {
    vec![
        kind.to_string(),
        c.function.clone(),
        share(c.base_share),
        share(c.new_share),
        format!("{} points", points(c.change_points)),
        format!("[{}, {}]", points(c.interval.0), points(c.interval.1)),
        if c.changed { "changed" } else { "-" }.to_string(),
    ]
}

fn rows(p: &ProfileComparison) -> Vec<Vec<String>> {
    let shown = |changes: &[FunctionChange], kind: &str| -> Vec<Vec<String>> {
        changes.iter().take(SHOWN).map(|c| row(kind, c)).collect()
    };
    let mut rows = shown(&p.self_changes, "self");
    rows.extend(shown(&p.inclusive_changes, "inclusive"));
    rows
}

fn side(runs: usize, event: &str, overhead: Option<f64>) -> String {
    let overhead = overhead
        .map(|o| format!(", {o:.2}x the timed runs' time"))
        .unwrap_or_default();
    format!("{runs} profiled runs ({event}{overhead})")
}

fn heading(p: &ProfileComparison) -> String {
    format!(
        "{}: BASE {}, NEW {}",
        p.configuration,
        side(p.base_runs, &p.base_event, p.base_overhead),
        side(p.new_runs, &p.new_event, p.new_overhead)
    )
}

const HEADERS: [&str; 7] = ["", "function", "BASE", "NEW", "change", "interval", ""];

fn intro(level: f64) -> String {
    format!(
        "Where the time went: shares of the profiles' samples, NEW minus BASE in points, with \
         the {} bootstrap interval over the profiled runs; a change only where it excludes 0",
        level_percent(level)
    )
}

/// The differential profiles as plain columns for the terminal ("" when there are none).
pub fn profile_text(profiles: &[ProfileComparison], level: f64) -> String {
    if profiles.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n", intro(level));
    for p in profiles {
        out.push('\n');
        out.push_str(&heading(p));
        out.push('\n');
        out.push_str(&columns(&HEADERS, &rows(p), &[0, 1, 6]));
    }
    out
}

/// The differential profiles as a Markdown section ("" when there are none).
pub fn profile_markup(m: &impl Markup, profiles: &[ProfileComparison], level: f64) -> String {
    if profiles.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n", m.escape(&intro(level)));
    let aligns = [
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ];
    let headers: Vec<String> = HEADERS.iter().map(ToString::to_string).collect();
    for p in profiles {
        out.push('\n');
        out.push_str(&m.strong(&m.escape(&heading(p))));
        out.push_str("\n\n");
        out.push_str(&m.table(&headers, &aligns, &rows(p)));
    }
    out
}

/// A session's profiled runs as `show` lists them ("" when it has none): per configuration
/// their count, event, sampling frequency and what profiling cost.
pub fn profiled_runs_text(runs: &[ProfiledRuns]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let hz: Vec<String> = r.frequencies_hz.iter().map(|f| format!("{f} Hz")).collect();
            vec![
                r.configuration.clone(),
                r.runs.to_string(),
                r.event.clone(),
                hz.join(", "),
                r.overhead
                    .map_or_else(|| "-".to_string(), |o| format!("{o:.2}x")),
            ]
        })
        .collect();
    format!(
        "profiled runs (run --profile; never in the statistics; overhead: a profiled run's time \
         over the timed runs' median, `plot flame` draws them):\n{}",
        columns(
            &["configuration", "runs", "event", "frequency", "overhead"],
            &rows,
            &[0, 2, 3]
        )
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::markup::Markdown;

    fn comparison() -> ProfileComparison {
        let change = |function: &str, b: f64, n: f64, lo: f64, hi: f64| FunctionChange {
            function: function.into(),
            base_share: b,
            new_share: n,
            change_points: (n - b) * 100.0,
            interval: (lo, hi),
            changed: lo > 0.0 || hi < 0.0,
        };
        ProfileComparison {
            configuration: "hackbench:groups=4".into(),
            base_runs: 3,
            new_runs: 3,
            base_event: "cpu-clock".into(),
            new_event: "cpu-clock".into(),
            base_overhead: Some(1.04),
            new_overhead: None,
            self_changes: vec![
                change("kmem_cache_alloc_[k]", 0.121, 0.182, 4.8, 7.5),
                change("a|b", 0.3, 0.29, -2.0, 0.5),
            ],
            inclusive_changes: vec![],
        }
    }

    #[test]
    fn changes_read_in_points_with_their_interval() {
        let text = profile_text(&[comparison()], 0.95);
        assert!(text.contains("95% bootstrap interval"), "{text}");
        assert!(text.contains("1.04x the timed runs' time"), "{text}");
        let line = text
            .lines()
            .find(|l| l.contains("kmem_cache_alloc_[k]"))
            .unwrap();
        assert!(line.contains("12.1%") && line.contains("18.2%"), "{line}");
        assert!(
            line.contains("+6.1 points  [+4.8, +7.5]  changed"),
            "{line}"
        );
        let line = text.lines().find(|l| l.contains("a|b")).unwrap();
        assert!(line.ends_with('-'), "{line}");
        assert_eq!(profile_text(&[], 0.95), "");
    }

    #[test]
    fn markdown_escapes_cells() {
        let md = profile_markup(&Markdown, &[comparison()], 0.95);
        assert!(md.contains("| self | a\\|b |"), "{md}");
        assert!(
            md.contains("**hackbench:groups=4: BASE 3 profiled runs"),
            "{md}"
        );
    }

    #[test]
    fn profiled_runs_are_listed_with_their_event_frequency_and_overhead() {
        assert_eq!(profiled_runs_text(&[]), "");
        let text = profiled_runs_text(&[ProfiledRuns {
            configuration: "hackbench:groups=4".into(),
            runs: 3,
            event: "cpu-clock".into(),
            frequencies_hz: vec![999],
            overhead: Some(1.084),
        }]);
        let row = text.lines().last().unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            ["hackbench:groups=4", "3", "cpu-clock", "999", "Hz", "1.08x"],
            "{text}"
        );
    }
}
