//! `show --histogram` of a real `syscall` run: the figures of every call and the distribution
//! with its CDF.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use vernier_testkit::{temp_db, vernier, vernier_stdout};

#[test]
fn show_histogram_draws_the_distribution_and_cdf_of_the_calls() {
    let (dir, db) = temp_db();
    vernier(&db)
        .args([
            "run",
            "syscall:call=getpid:calls=2000",
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--monitor",
            "none",
            "--quiet",
        ])
        .assert()
        .success();
    let text = vernier_stdout(&db, &["show", "latest", "--histogram"]);
    let at = text
        .find("time per call, every call")
        .unwrap_or_else(|| panic!("no distribution of calls:\n{text}"));
    let lines: Vec<&str> = text[at..].lines().collect();
    // The figures of both runs' 4000 calls, as the kbench write-up prints them.
    let figures = lines[1];
    assert!(figures.starts_with("min="), "{figures}");
    assert!(figures.contains(" count=4000 "), "{figures}");
    for name in ["p50=", "p90=", "p95=", "p99=", "mad="] {
        assert!(figures.contains(name), "{figures}");
    }
    assert!(figures.ends_with("(ns, 2 measured runs)"), "{figures}");
    // `plot histogram` draws the same distribution, its percentiles those `show` prints.
    let figure = dir.path().join("calls.svg");
    vernier(&db)
        .args(["plot", "histogram", "latest", "-o"])
        .arg(&figure)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&figure).unwrap();
    let value = |name: &str| {
        figures
            .split(' ')
            .find_map(|f| f.strip_prefix(&format!("{name}=")))
            .unwrap()
            .to_string()
    };
    let legend = format!(
        "p50 {} p99 {} max {} ns",
        value("p50"),
        value("p99"),
        value("max")
    );
    assert!(svg.contains(&legend), "{legend} in {svg}");
    let rows: Vec<&str> = lines[3..]
        .iter()
        .copied()
        .take_while(|l| l.contains('│'))
        .collect();
    assert!(rows.len() >= 2, "{text}");
    // The counts of the rows add up to every call, and the CDF grows to the full width.
    let count = |row: &str| row.rsplit(' ').next().unwrap().parse::<u64>().unwrap();
    assert_eq!(rows.iter().map(|r| count(r)).sum::<u64>(), 4000, "{text}");
    let filled = |row: &str| {
        row.split('│')
            .nth(1)
            .unwrap()
            .chars()
            .filter(|c| *c != ' ')
            .count()
    };
    let filled: Vec<usize> = rows.iter().map(|r| filled(r)).collect();
    assert!(filled.windows(2).all(|w| w[0] <= w[1]), "{text}");
    assert_eq!(*filled.last().unwrap(), 50, "{text}");
}
