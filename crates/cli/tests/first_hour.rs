//! What a new user meets in the first hour: tables that fit the terminal (also one whose size
//! is unknown), help that explains the columns, the man page's sections, `export` of several
//! selectors.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_testkit::vernier;

/// A database with two imported sessions (tags kernel=A and kernel=B).
fn database() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-kernels.json");
    vernier(&db).arg("import").arg(fixture).assert().success();
    (dir, db)
}

/// `show`'s table under `script`, whose terminal reports a size of 0x0 (as a serial console
/// does): columns as wide as their text, not one character.
#[test]
fn a_terminal_of_size_zero_gets_whole_columns() {
    if Command::new("script").arg("--version").output().is_err() {
        println!("skipped: script(1) (util-linux) is not installed");
        return;
    }
    let (dir, db) = database();
    let binary = assert_cmd::cargo::cargo_bin("vernier");
    let command = format!("{} --db {} show kernel=A", binary.display(), db.display());
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("VERNIER_DB")
        .env_remove("COLUMNS")
        .env("XDG_CACHE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("VERNIER_RUN_DIR", dir.path().join("run"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("│ median "), "one-character columns: {text}");
}

/// `compare` in a terminal 80 columns wide: no line longer, the verdict whole.
#[test]
fn compare_fits_a_terminal_of_80_columns() {
    if Command::new("script").arg("--version").output().is_err() {
        println!("skipped: script(1) (util-linux) is not installed");
        return;
    }
    let (dir, db) = database();
    let binary = assert_cmd::cargo::cargo_bin("vernier");
    let command = format!(
        "stty cols 80; {} --db {} compare kernel=A kernel=B",
        binary.display(),
        db.display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("VERNIER_DB")
        .env("XDG_CACHE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("VERNIER_RUN_DIR", dir.path().join("run"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(out.status.success(), "{text}");
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert!(table.iter().all(|l| l.chars().count() <= 80), "{text}");
    assert!(table[..2].join(" ").contains("verdict"), "{text}");
    assert!(table.iter().any(|l| l.ends_with("inconclusive")), "{text}");
}

#[test]
fn compare_help_explains_mdc_and_p_adj() {
    let dir = tempfile::tempdir().unwrap();
    let out = vernier(&dir.path().join("r.db"))
        .args(["compare", "--help"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("MDC      minimum detectable change"),
        "{text}"
    );
    assert!(text.contains("p adj    p adjusted across"), "{text}");
}

/// The top page has EXAMPLES and EXIT STATUS, and every page it points to is produced.
#[test]
fn the_man_page_has_examples_exit_status_and_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = vernier(&db).arg("man").assert().success();
    let top = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for section in [".SH \"EXAMPLES\"", ".SH \"EXIT STATUS\""] {
        assert!(top.contains(section), "{section}");
    }
    assert!(!top.contains(".SH EXTRA"), "{top}");
    assert!(top.contains("vernier\\-compare(1)"), "{top}");
    let page = vernier(&db)
        .args(["man", "vernier-compare"])
        .assert()
        .success();
    let page = String::from_utf8_lossy(&page.get_output().stdout).into_owned();
    assert!(page.contains(".SH \"NOTES\""), "{page}");
    assert!(page.contains("minimum detectable change"), "{page}");
}

#[test]
fn export_takes_several_selectors() {
    let (_dir, db) = database();
    let both = vernier(&db)
        .args(["export", "kernel=A", "kernel=B", "kernel=A"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&both.get_output().stdout).unwrap();
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 2, "{doc}");
    let one = vernier(&db).args(["export", "kernel=B"]).assert().success();
    let doc: serde_json::Value = serde_json::from_slice(&one.get_output().stdout).unwrap();
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 1, "{doc}");
}

/// `run`'s summary names the metric whose median it shows, and counts in words.
#[test]
fn the_run_summary_names_its_statistic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = vernier(&db)
        .args([
            "run",
            "command:cmd=true",
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains(": 1 configuration\n"), "{text}");
    assert!(text.contains("2 runs, time "), "{text}");
    assert!(text.contains(" s (median of the runs)"), "{text}");
    assert!(text.contains("median of runs"), "{text}");
    assert!(!text.contains("(s)"), "{text}");
    // The label names the option given; show -v and JSON have them all.
    assert!(text.contains("[1] command:cmd=true\n"), "{text}");
    assert!(!text.contains("spawn_warmup"), "{text}");
    let shown = vernier(&db).args(["show", "-v"]).assert().success();
    let shown = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    assert!(shown.contains("command:cmd=true  ("), "{shown}");
    assert!(
        shown.contains("options: command:calibration=20:cleanup=:cmd=true:"),
        "{shown}"
    );
    assert!(shown.contains("spawn_warmup=10"), "{shown}");
    let json = vernier(&db)
        .args(["show", "--format", "json"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(doc[0]["options"]["spawn_warmup"], 10, "{doc}");
}

/// Bash completes benchmark, option and suite names from the registries.
#[test]
fn bash_completes_benchmarks_options_and_suites() {
    let dir = tempfile::tempdir().unwrap();
    let out = vernier(&dir.path().join("r.db"))
        .args(["completions", "bash"])
        .assert()
        .success();
    let script = dir.path().join("vernier.bash");
    std::fs::write(&script, &out.get_output().stdout).unwrap();
    let complete = |words: &str| -> String {
        let test = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); \
             COMP_LINE=\"{words}\"; COMP_POINT=${{#COMP_LINE}}; \
             _vernier vernier \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             echo \"${{COMPREPLY[*]}}\"",
            script.display()
        );
        let out = Command::new("bash").args(["-c", &test]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let specs = complete("vernier run hack");
    assert!(specs.split(' ').any(|w| w == "hackbench"), "{specs}");
    assert!(
        specs.split(' ').any(|w| w == "hackbench:groups="),
        "{specs}"
    );
    assert_eq!(complete("vernier run --suite sched"), "scheduler");
    assert_eq!(complete("vernier run --setup swap-r"), "swap-reset");
}
