//! `vernier plot`: each kind draws an SVG from sessions written straight into a database, with
//! its title, axis labels, legend and the expected number of marks; PNG output is a PNG of the
//! requested size; bad input is one line, status 2 and no file. `KEEPSVG=DIR` keeps each
//! kind's figure and database in DIR, to look at them.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, OptionValue, Options, Recorder, RunRecord, SessionInfo, SessionStatus,
    StopReason,
};
use vernier_store::SqliteStore;
use vernier_testkit::site::latency_histogram;
use vernier_testkit::{begun_configuration, begun_session, run as measured_run, temp_db, vernier};

/// A configuration of the fixture: benchmark, options and its runs' values.
struct Config {
    benchmark: &'static str,
    options: Vec<(&'static str, u64)>,
    values: Vec<f64>,
}

fn config(benchmark: &'static str, options: &[(&'static str, u64)], values: &[f64]) -> Config {
    Config {
        benchmark,
        options: options.to_vec(),
        values: values.to_vec(),
    }
}

/// Writes a session tagged `kernel=<kernel>` with `configs` into the database at `path`.
/// `run` fills in each run's histograms and monitor data (configuration index, run index).
fn record_with(
    path: &Path,
    kernel: &str,
    configs: &[Config],
    run: impl Fn(usize, usize, &mut RunRecord),
) -> Uuid {
    let mut store = SqliteStore::open(path).unwrap();
    let id = Uuid::new_v4();
    store
        .begin_session(&SessionInfo {
            id,
            ..begun_session("test", kernel)
        })
        .unwrap();
    for (ci, c) in configs.iter().enumerate() {
        let options = Options(
            c.options
                .iter()
                .map(|(k, v)| (k.to_string(), OptionValue::UInt(*v)))
                .collect(),
        );
        let record = ConfigurationRecord {
            position: ci as u32,
            ..begun_configuration(c.benchmark, options, ("time", "ms"))
        };
        store.add_configuration(id, &record).unwrap();
        for (i, &v) in c.values.iter().enumerate() {
            let start = 1_000 + i as i64 * 1_000_000_000;
            let mut r = measured_run(i as u32, start, start + 500_000_000, ("time", v));
            run(ci, i, &mut r);
            store.add_run(record.id, &r).unwrap();
        }
        store
            .finish_configuration(record.id, StopReason::MaxRuns, false, None)
            .unwrap();
    }
    store
        .finish_session(id, SessionStatus::Completed, 2_000)
        .unwrap();
    id
}

fn record(path: &Path, kernel: &str, configs: &[Config]) -> Uuid {
    record_with(path, kernel, configs, |_, _, _| {})
}

/// Ten runs around `centre`.
fn runs(centre: f64) -> Vec<f64> {
    (0..10).map(|i| centre + (i as f64 - 4.5) * 0.1).collect()
}

/// Sweeps hackbench over groups 1, 2, 4, 8 with medians `scale * groups`.
fn sweep(scale: f64) -> Vec<Config> {
    [1, 2, 4, 8]
        .iter()
        .map(|&g| config("hackbench", &[("groups", g)], &runs(scale * g as f64)))
        .collect()
}

fn svg(db: &Path, args: &[&str]) -> String {
    let dir = db.parent().unwrap();
    let out = dir.join("figure.svg");
    let _ = std::fs::remove_file(&out);
    vernier(db)
        .arg("plot")
        .args(args)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    if let Ok(keep) = std::env::var("KEEPSVG") {
        std::fs::write(format!("{keep}/{}.svg", args[0]), &text).unwrap();
        std::fs::copy(db, format!("{keep}/{}.db", args[0])).unwrap();
    }
    text
}

/// The texts of an SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// Whether the SVG has a text element reading exactly `what`.
fn has_text(svg: &str, what: &str) -> bool {
    texts(svg).iter().any(|t| t == what)
}

fn count(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

#[test]
fn box_plots_every_run_of_every_series_with_title_axes_and_legend() {
    let (_dir, db) = temp_db();
    record(&db, "6.8", &sweep(1.0));
    record(&db, "6.9", &sweep(1.1));
    // A third session of kernel 6.9, pooled with the second into one series.
    record(&db, "6.9", &sweep(1.2));
    let text = svg(&db, &["box", "kernel=6.8", "kernel=6.9"]);
    assert!(
        text.contains("hackbench runs: kernel=6.8 vs kernel=6.9"),
        "{text}"
    );
    assert!(text.contains("time (ms)"));
    assert!(text.contains("hackbench configuration"));
    assert!(has_text(&text, "kernel=6.8") && has_text(&text, "kernel=6.9"));
    for g in [1, 2, 4, 8] {
        assert!(has_text(&text, &format!("groups={g}")), "groups={g}");
    }
    // Every run a dot: 4 configurations x (10 + 20) runs.
    assert_eq!(count(&text, "<circle"), 4 * 30);
}

#[test]
fn box_and_bar_labels_are_what_varies_and_the_caption_what_is_shared() {
    let (dir, db) = temp_db();
    let configs = |scale: f64| -> Vec<Config> {
        [1, 2, 4, 8]
            .iter()
            .map(|&g| {
                let options = [("groups", g), ("fds", 20), ("loops", 100_000)];
                config("hackbench", &options, &runs(scale * g as f64))
            })
            .collect()
    };
    record(&db, "6.8", &configs(1.0));
    record(&db, "6.9", &configs(1.1));
    for kind in ["box", "bars"] {
        let text = svg(&db, &[kind, "kernel=6.8", "kernel=6.9"]);
        let all = texts(&text);
        for g in [1, 2, 4, 8] {
            assert!(has_text(&text, &format!("groups={g}")), "{kind}: {all:?}");
        }
        // The shared options are said once, in the caption, not under every slot.
        assert_eq!(
            all.iter().filter(|t| t.contains("loops=100000")).count(),
            1,
            "{kind}: {all:?}"
        );
        assert!(
            all.iter()
                .any(|t| t.starts_with("hackbench configuration, each with fds=20:loops=100000")),
            "{kind}: {all:?}"
        );
    }
    // One configuration: each box is labelled with what tells its series apart.
    let one = dir.path().join("one.db");
    let options = [("groups", 4), ("fds", 20), ("loops", 100_000)];
    record(&one, "6.8", &[config("hackbench", &options, &runs(1.0))]);
    record(&one, "6.9", &[config("hackbench", &options, &runs(1.2))]);
    let text = svg(&one, &["box", "kernel=6.8", "kernel=6.9"]);
    // In the legend and under its box.
    assert_eq!(
        texts(&text).iter().filter(|t| *t == "kernel=6.9").count(),
        2,
        "{:?}",
        texts(&text)
    );
    // Its label leaves out fds=20, hackbench's default.
    assert!(texts(&text)
        .iter()
        .any(|t| t.starts_with("hackbench:groups=4:loops=100000")));
}

#[test]
fn png_is_a_png_of_the_requested_size() {
    let (dir, db) = temp_db();
    record(&db, "6.8", &sweep(1.0));
    let out = dir.path().join("figure.png");
    vernier(&db)
        .args([
            "plot", "box", "latest", "--width", "640", "--height", "400", "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (640, 400));
}

/// The `y` attribute of each `<text>` element reading exactly `what`.
fn text_ys(svg: &str, what: &str) -> Vec<f64> {
    svg.split("<text")
        .skip(1)
        .filter(|t| {
            let body = t.split_once('>').map_or("", |(_, b)| b);
            body.split("</text>").next().unwrap_or("").trim() == what
        })
        .map(|t| {
            let y = &t[t.find(" y=\"").unwrap() + 4..];
            y[..y.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

#[test]
fn many_panels_make_the_figure_taller_and_a_too_small_height_is_warned_about() {
    let (dir, db) = temp_db();
    // Six benchmarks: six panels, one above the other, as the README's example draws them.
    let benchmarks = ["a", "b", "c", "d", "e", "f"];
    for (kernel, scale) in [("6.8", 1.0), ("6.9", 1.1)] {
        let configs: Vec<Config> = benchmarks
            .iter()
            .map(|&b| config(b, &[], &runs(scale * 2_500_000.0)))
            .collect();
        record(&db, kernel, &configs);
    }
    let text = svg(&db, &["box", "kernel=6.8", "kernel=6.9"]);
    let height: f64 = {
        let h = &text[text.find("height=\"").unwrap() + 8..];
        h[..h.find('"').unwrap()].parse().unwrap()
    };
    assert!(height >= f64::from(80 + 6 * 300), "{height}");
    // Each panel's y caption stands in the middle of its panel: one panel height apart.
    let mut ys = text_ys(&text, "time (ms)");
    ys.sort_by(f64::total_cmp);
    assert_eq!(ys.len(), 6, "{ys:?}");
    for pair in ys.windows(2) {
        assert!(pair[1] - pair[0] >= 300.0, "{ys:?}");
    }
    // A height given too small is drawn as asked, with one warning line.
    let out = dir.path().join("small.svg");
    let run = vernier(&db)
        .args([
            "plot",
            "box",
            "kernel=6.8",
            "kernel=6.9",
            "--height",
            "700",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let stderr = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("warning: --height 700"), "{stderr}");
    assert!(stderr.contains("--height 1880"), "{stderr}");
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("height=\"700\""));
    // Enough height: no warning.
    let run = vernier(&db)
        .args([
            "plot",
            "box",
            "kernel=6.8",
            "kernel=6.9",
            "--height",
            "1880",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    assert!(run.get_output().stderr.is_empty());
}

/// Runs `vernier plot ARGS -o figure.svg`, expects status 2 with a one-line error containing
/// `message`, and no file.
fn fails(db: &Path, args: &[&str], message: &str) {
    let out_file = db.parent().unwrap().join("figure.svg");
    let _ = std::fs::remove_file(&out_file);
    let mut cmd = vernier(db);
    cmd.arg("plot").args(args);
    if !args.contains(&"-o") {
        cmd.arg("-o").arg(&out_file);
    }
    let out = cmd.assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
    assert!(!out_file.exists());
}

#[test]
fn bad_input_is_one_line_status_2_and_no_file() {
    let (dir, db) = temp_db();
    record(&db, "6.8", &sweep(1.0));
    fails(&db, &["pie", "latest"], "pie");
    fails(
        &db,
        &[
            "box",
            "latest",
            "-o",
            dir.path().join("figure.pdf").to_str().unwrap(),
        ],
        "must end in .svg or .png",
    );
    fails(&db, &["box", "kernel=none"], "no session matches");
    fails(&db, &["box"], "at least one SELECTOR");
    fails(&db, &["box", "latest", "--benchmark", "nope"], "nope");
}

#[test]
fn latency_draws_a_step_line_per_cpu_with_its_worst_case_in_the_legend() {
    let (dir, db) = temp_db();
    let latency = [config("latency", &[], &[10.0, 11.0, 12.0])];
    record_with(&db, "rt", &latency, |_, run, r| {
        r.histograms = vec![
            latency_histogram(0, 5_000, 40 + 20 * run as u64),
            latency_histogram(1, 5_000, 30),
        ];
    });
    let text = svg(&db, &["latency", "latest"]);
    assert!(texts(&text)
        .iter()
        .any(|t| t.starts_with("latency per CPU: ")));
    let starts = |what: &str| texts(&text).iter().any(|t| t.starts_with(what));
    // The maxima lie far beyond the p99.9 of 4-6 us: a bar of their own, counted in the legend.
    assert!(starts(
        "latency (us), 1 us bins; the bar at the right: samples beyond"
    ));
    assert!(has_text(&text, "samples (log scale)"));
    assert!(starts("CPU0 max 80 us, 3 beyond"), "{:?}", texts(&text));
    assert!(starts("CPU1 max 30 us, 3 beyond"));
    // The series' lines (axes and ticks are polylines of width 1).
    assert_eq!(count(&text, "stroke-width=\"2\" points"), 2);
    // Sessions without histograms: an error, and no file.
    let plain = dir.path().join("plain.db");
    record(&plain, "6.8", &sweep(1.0));
    fails(&plain, &["latency", "latest"], "no latency histograms");
}

#[test]
fn line_draws_the_median_against_the_swept_option_with_its_interval_as_a_band() {
    let (_dir, db) = temp_db();
    record(&db, "6.8", &sweep(1.0));
    record(&db, "6.9", &sweep(1.2));
    let text = svg(&db, &["line", "kernel=6.8", "kernel=6.9"]);
    assert!(has_text(
        &text,
        "hackbench against groups: kernel=6.8 vs kernel=6.9"
    ));
    assert!(has_text(&text, "hackbench groups"));
    assert!(has_text(&text, "median time (ms) (band: its interval)"));
    assert!(has_text(&text, "kernel=6.8") && has_text(&text, "kernel=6.9"));
    assert_eq!(count(&text, "stroke-width=\"2\" points"), 2);
    assert_eq!(count(&text, "<polygon"), 2);
    assert_eq!(count(&text, "<circle"), 8);
    fails(&db, &["line", "latest", "--option", "nope"], "nope");
}

#[test]
fn forest_draws_each_ratio_with_its_interval_and_the_geometric_mean() {
    let (_dir, db) = temp_db();
    record(&db, "6.8", &sweep(1.0));
    record(&db, "6.9", &sweep(1.2));
    let text = svg(&db, &["forest", "--compare", "kernel=6.8", "kernel=6.9"]);
    assert!(has_text(&text, "kernel=6.9 vs kernel=6.8: ratio NEW/BASE"));
    // What all rows share is said once, under the axis' caption; each row names what is its
    // own.
    assert!(texts(&text)
        .iter()
        .any(|t| t.starts_with("ratio NEW/BASE with its 95% interval")));
    assert!(has_text(&text, "each configuration: hackbench"));
    // groups=1: 1.0 against 1.2 with runs 0.9 wide overlap. One session a side without a
    // calibration assumes the default session noise (docs/compare.md), and the runs lie on a
    // grid of 0.1 ms (ties): 20% more is a verdict only where the runs' spread and the grid
    // are small against the medians, at groups=8.
    // Each row with its change in percent before its verdict.
    let row = |g: u32, verdict: &str| {
        texts(&text).iter().any(|t| {
            t.strip_prefix(&format!("groups={g}  +"))
                .and_then(|rest| rest.strip_suffix(&format!("% {verdict}")))
                .is_some_and(|change| change.parse::<f64>().is_ok())
        })
    };
    for g in [1, 2, 4] {
        assert!(row(g, "inconclusive"), "{g}: {:?}", texts(&text));
    }
    assert!(row(8, "slower"), "{:?}", texts(&text));
    assert!(has_text(&text, "geometric mean of 4"));
    assert!(has_text(&text, "faster") && has_text(&text, "slower"));
    // A point per row and one per verdict of the legend under the axis.
    assert_eq!(count(&text, "<circle"), 4 + 5);
    fails(&db, &["forest", "latest"], "--compare");
}

#[test]
fn monitor_draws_a_key_during_each_run_of_each_configuration() {
    use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
    let (_dir, db) = temp_db();
    let configs = [
        config("hackbench", &[("groups", 1)], &[1.0, 1.1, 1.2]),
        config("hackbench", &[("groups", 2)], &[2.0, 2.1, 2.2]),
    ];
    record_with(&db, "6.8", &configs, |c, run, r| {
        let points = (0..5)
            .map(|i| MonitorPoint {
                t_ns: i * 100_000_000,
                value: (i * (c as i64 + 1) * (run as i64 + 1) * 1_000) as f64,
            })
            .collect();
        r.monitors = Some(Box::new(RunMonitorData {
            series: vec![MonitorSeries {
                monitor: "stat".into(),
                metric: "ctxt".into(),
                unit: "count".into(),
                kind: SeriesKind::Counter,
                points,
            }],
            ..Default::default()
        }));
    });
    let text = svg(&db, &["monitor", "latest", "--key", "stat.ctxt"]);
    assert!(has_text(&text, "stat.ctxt during the runs"));
    assert!(has_text(&text, "time since the run started (s)"));
    assert!(has_text(&text, "stat.ctxt (count)"));
    assert!(texts(&text)
        .iter()
        .any(|t| t.ends_with("hackbench:groups=2; stat.ctxt: increase since the run started")));
    for n in 1..=3 {
        assert!(has_text(&text, &format!("run {n}")));
    }
    // Two configurations of three runs: a line each.
    assert_eq!(count(&text, "stroke-width=\"2\" points"), 6);
    fails(
        &db,
        &["monitor", "latest", "--key", "stat.nope"],
        "stat.nope",
    );
    fails(&db, &["monitor", "latest"], "--key");
}

#[test]
fn history_draws_one_configuration_over_its_sessions_and_asks_which_of_several() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    for (kernel, centre) in [("A", 1.0), ("B", 1.0), ("C", 2.0)] {
        record(&db, kernel, &[config("pipe", &[], &runs(centre))]);
    }
    let figure = svg(&db, &["history", "kernel=A", "kernel=B", "kernel=C"]);
    assert!(
        texts(&figure)
            .iter()
            .any(|t| t.starts_with("pipe on ") && t.ends_with("session medians over time")),
        "{:?}",
        texts(&figure)
    );
    // A sweep is several histories: which one is asked for.
    let db2 = dir.path().join("sweep.db");
    for kernel in ["A", "B"] {
        record(&db2, kernel, &sweep(1.0));
    }
    fails(
        &db2,
        &["history", "kernel=A", "kernel=B"],
        "the selected sessions have 4 histories",
    );
    fails(
        &db2,
        &["history", "kernel=A", "--benchmark", "pipe"],
        "no configuration of the selected sessions has a history in benchmark 'pipe'",
    );
}

#[test]
fn histogram_draws_latency_histograms_and_says_when_there_is_no_distribution() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    record_with(
        &db,
        "A",
        &[config("latency", &[], &[1.0, 1.0])],
        |_, _, run| {
            run.histograms = vec![
                latency_histogram(0, 1000, 40),
                latency_histogram(1, 1000, 55),
            ]
        },
    );
    let figure = svg(&db, &["histogram", "kernel=A"]);
    assert!(count(&figure, "<text") > 5, "{figure}");
    let db2 = dir.path().join("plain.db");
    record(&db2, "A", &sweep(1.0));
    fails(
        &db2,
        &["histogram", "kernel=A"],
        "no distribution in the selected sessions",
    );
}
