//! `history` on synthetic series of known truth (docs/history.md, "Episodes, drifts and the
//! baseline"): regressions that came and went, drifts, staircases of small steps, single bad
//! sessions and plain noise, 24 series each, written with what E-Divisive and PELT find in them
//! by `scripts/gen_history_classes.py`. Prints the table of docs/history.md (`cargo test -p
//! vernier-analysis --test history_classes -- --nocapture`) and fails when vernier finds
//! fewer than the floors below or raises alarms on series without a change.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use uuid::Uuid;
use vernier_analysis::{history, Direction, HistorySeries, HistorySettings};
use vernier_model::StoredSession;
use vernier_testkit::synthetic_session;

const DAY_NS: i64 = 86_400_000_000_000;
/// A detected boundary may be this many sessions from the planted one (the margin of the
/// change-point test, tighter than TCPDBench's 5 for series of 40).
const MARGIN: usize = 2;

fn fixture() -> Value {
    let text = include_str!("fixtures/history_classes.json");
    serde_json::from_str(text).unwrap()
}

/// A session per median, each of five runs spread by 0.2% around it (its median exactly).
fn sessions(medians: &[f64]) -> Vec<StoredSession> {
    medians
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let runs: Vec<f64> = [-0.002, -0.001, 0.0, 0.001, 0.002]
                .iter()
                .map(|d| m * (1.0 + d))
                .collect();
            synthetic_session(&runs)
                .benchmark("bench")
                .started_at((i as i64 + 1) * DAY_NS)
                .hostname("farm1")
                .build(Uuid::new_v4)
        })
        .collect()
}

fn near(a: usize, b: usize) -> bool {
    a.abs_diff(b) <= MARGIN
}

/// Whether change points `cps` mark an episode `from..to` at both ends.
fn cps_mark(cps: &[usize], from: usize, to: usize) -> bool {
    cps.iter().any(|&c| near(c, from)) && cps.iter().any(|&c| near(c, to))
}

/// Whether vernier reports the planted episode `from..to` as a regression that came back.
fn vernier_marks(s: &HistorySeries, from: usize, to: usize) -> bool {
    s.episodes.iter().any(|e| {
        e.change.direction == Direction::Regression
            && near(e.from_index, from)
            && near(e.to_index, to)
    })
}

/// Anything vernier says changed: a step, an episode or a drift.
fn vernier_alarms(s: &HistorySeries) -> bool {
    !s.steps.is_empty() || !s.episodes.is_empty() || !s.drifts.is_empty()
}

#[derive(Default)]
struct Tally {
    series: usize,
    vernier: usize,
    e_divisive: usize,
    pelt: usize,
}

impl Tally {
    fn row(&self, name: &str, what: &str) -> String {
        let share = |k: usize| {
            format!(
                "{k}/{} ({:.0}%)",
                self.series,
                100.0 * k as f64 / self.series as f64
            )
        };
        format!(
            "| {name} | {what} | {} | {} | {} |",
            share(self.vernier),
            share(self.e_divisive),
            share(self.pelt)
        )
    }
}

#[test]
fn episodes_drifts_and_staircases_are_found_and_noise_raises_no_alarm() {
    let fx = fixture();
    let settings = HistorySettings::default();
    let mut tallies: Vec<(&str, Tally)> = [
        "transient",
        "drift +3%",
        "drift +6%",
        "staircase",
        "outlier",
        "null",
    ]
    .into_iter()
    .map(|c| (c, Tally::default()))
    .collect();
    let mut drifts_reported = 0;
    let (mut episodes_reported, mut episodes_true) = (0, 0);
    for item in fx["series"].as_array().unwrap() {
        let class = item["class"].as_str().unwrap();
        let medians: Vec<f64> = item["medians"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let cps = |key: &str| -> Vec<usize> {
            item[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect()
        };
        let (ed, pelt) = (cps("e_divisive"), cps("pelt"));
        let report = history(&sessions(&medians), &[], &settings, &[]).unwrap();
        let s = &report.series[0];
        let row = match class {
            "drift" if item["truth"]["total"].as_f64().unwrap() < 0.05 => "drift +3%",
            "drift" => "drift +6%",
            c => c,
        };
        if class == "drift" {
            drifts_reported += usize::from(
                s.drifts
                    .iter()
                    .any(|d| d.direction == Direction::Regression),
            );
        }
        let tally = &mut tallies.iter_mut().find(|(c, _)| *c == row).unwrap().1;
        tally.series += 1;
        episodes_reported += s.episodes.len();
        // What counts as found: the episode at both ends; a drift or staircase as "worse now"
        // by vernier (exit 1 under --fail-on-regression) and as any change point by the
        // references (a generous reading: they do not judge); in series without a change, any
        // alarm counts against its method.
        let (v, e, p) = match class {
            "transient" => {
                let (from, to) = (
                    item["truth"]["from"].as_u64().unwrap() as usize,
                    item["truth"]["to"].as_u64().unwrap() as usize,
                );
                let found = vernier_marks(s, from, to);
                episodes_true += usize::from(found);
                (found, cps_mark(&ed, from, to), cps_mark(&pelt, from, to))
            }
            "drift" | "staircase" => (s.ends_in_regression(), !ed.is_empty(), !pelt.is_empty()),
            _ => (vernier_alarms(s), !ed.is_empty(), !pelt.is_empty()),
        };
        tally.vernier += usize::from(v);
        tally.e_divisive += usize::from(e);
        tally.pelt += usize::from(p);
    }
    println!("| class | counted | vernier | E-Divisive | PELT |");
    println!("|---|---|---|---|---|");
    for (class, t) in &tallies {
        let what = match *class {
            "transient" => "episode found at both ends",
            "outlier" | "null" => "false alarm",
            _ => "flagged",
        };
        println!("{}", t.row(class, what));
    }
    println!("episodes reported {episodes_reported}, of them the planted one {episodes_true}");
    println!("drift series with a drift reported: {drifts_reported} of 24");
    let get = |c: &str| &tallies.iter().find(|(k, _)| *k == c).unwrap().1;
    let share = |t: &Tally| t.vernier as f64 / t.series as f64;
    assert!(share(get("transient")) >= 0.9, "transient recall");
    assert!(share(get("drift +6%")) >= 0.8, "drift recall at +6%");
    assert!(share(get("staircase")) >= 0.9, "staircase recall");
    assert!(
        share(get("outlier")) <= 0.1,
        "false alarms with single bad sessions"
    );
    assert!(share(get("null")) <= 0.1, "false alarms in noise");
    assert!(
        episodes_true as f64 >= 0.9 * episodes_reported as f64,
        "episode precision: {episodes_true} of {episodes_reported}"
    );
}
