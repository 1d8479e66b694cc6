//! The output of `vernier calibrate`: one row per calibrated configuration. The estimate and
//! the minimum detectable change it predicts are `vernier_analysis`'s; this module presents them.

use vernier_analysis::predicted_mdc;
use vernier_model::{Calibration, ConfigKey};

use crate::format::pct;
use crate::table::columns;

const HEADERS: [&str; 7] = [
    "configuration",
    "sessions",
    "runs",
    "session SD",
    "within SD",
    "between SD",
    "MDC 1 vs 1",
];

fn percent(sd: f64) -> String {
    format!("{:.2}%", sd * 100.0)
}

/// One row per configuration: the spread of the session medians, what the runs explain of it,
/// the noise between sessions beyond that, and what a compare of two such sessions can detect;
/// then a line that says what the columns mean.
pub fn table(calibrations: &[Calibration]) -> String {
    let rows: Vec<[String; 7]> = calibrations
        .iter()
        .map(|c| {
            [
                ConfigKey::new(&c.benchmark, &c.options).to_string(),
                c.sessions.to_string(),
                c.runs.to_string(),
                percent(c.session_sd),
                percent(c.within_sd),
                percent(c.between_sd),
                predicted_mdc(c).map_or_else(|| "-".to_string(), pct),
            ]
        })
        .collect();
    let mut out = columns(&HEADERS, &rows, &[0]);
    out.push_str(
        "SDs are of natural logarithms (0.01 is about 1%); between SD = sqrt(max(0, session SD^2 \
         - within SD^2)); MDC 1 vs 1: the change a compare of two such sessions detects with 80% \
         probability at a 2% threshold\n",
    );
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use vernier_model::Options;

    #[test]
    fn columns_are_aligned_two_spaces_apart() {
        let c = Calibration {
            id: Uuid::nil(),
            created_at_ns: 0,
            fingerprint: "f".into(),
            benchmark: "pipe".into(),
            options: Options::default(),
            metric: "m".into(),
            sessions: 5,
            runs: 50,
            session_sd: 0.01,
            within_sd: 0.01,
            between_sd: 0.0,
            df: 4.0,
            session_ids: Vec::new(),
        };
        let text = table(&[c]);
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "configuration  sessions  runs  session SD  within SD  between SD  MDC 1 vs 1"
        );
        let row = lines.next().unwrap();
        assert!(row.starts_with("pipe           "), "{row}");
        assert!(row.ends_with('%'), "{row}");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells[..6],
            ["pipe", "5", "50", "1.00%", "1.00%", "0.00%"],
            "{row}"
        );
        assert_eq!(row.len(), text.lines().next().unwrap().len(), "{text}");
    }
}
