//! Messages: one line each, said once; control characters refused at input and escaped on
//! output; selectors that name tag values with commas; options that would do nothing refused;
//! `system reset` in the order and direction it restores.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use vernier_testkit::{imported_db, temp_db, vernier};

/// A database with two imported sessions: kernel=A,host=x (older) and kernel=B,host=x.
fn database() -> (tempfile::TempDir, PathBuf) {
    imported_db(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-kernels.json"))
}

/// Runs and returns (status, stdout, stderr).
fn output(cmd: &mut Command) -> (Option<i32>, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit 2 and one line on stderr holding `expected` once.
fn assert_one_line_error(cmd: &mut Command, expected: &str) -> String {
    let (code, _, err) = output(cmd);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.matches(expected).count(), 1, "'{expected}' once: {err}");
    err
}

#[test]
fn option_errors_are_one_line_said_once() {
    let (_dir, db) = temp_db();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "yield:duration=-1"],
            "expected a number in 0.01..=3600",
        ),
        (&["run", "--min-runs", "-1", "mock"], "-1 is not in 0.."),
        (&["run", "--warmup", "-3", "mock"], "-3 is not in 0.."),
        (&["run", "--target", "-2%", "mock"], "is outside (0, 1)"),
        (&["run", "--max-time", "-1", "mock"], "--max-time"),
        (&["run", "--seed", "3", "mock"], "--interleave"),
        (&["run", "--bogus"], "unexpected argument '--bogus' found"),
        (&["show", "--format", "xml"], "possible values: table, json"),
        (&["compare"], "<BASE> <NEW>"),
        (&["shw"], "a similar subcommand exists: 'show'"),
        (
            &["run", "memlat:size=1.5M"],
            "expected a size in 16..=1099511627776 bytes",
        ),
        (
            &["run", "memlat:stride=12"],
            "stride=12 is not a multiple of 8 bytes",
        ),
        (&["run", "memory:size=8:threads=2"], "fewer than threads=2"),
        (
            &["run", "memory:ntimes=1"],
            "expected an integer in 2..=10000",
        ),
    ];
    for (args, expected) in cases {
        assert_one_line_error(vernier(&db).args(*args), expected);
    }
    assert!(!db.exists(), "no database written");
}

#[test]
fn database_errors_are_one_line_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "not a database at all, only text\n".repeat(40)).unwrap();
    for args in [&["sessions"][..], &["run", "mock", "--quiet"]] {
        assert_one_line_error(vernier(&text).args(args), "not an SQLite database");
    }
    let (_dir, db) = database();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "user_version", -5).unwrap();
    drop(conn);
    for args in [&["sessions"][..], &["run", "mock", "--quiet"]] {
        let err = assert_one_line_error(vernier(&db).args(args), "schema version -5");
        assert!(!err.contains("CREATE"), "no SQL: {err}");
    }
}

#[test]
fn control_characters_are_refused_at_input() {
    let (_dir, db) = temp_db();
    for (flag, value) in [
        ("--tag", "kernel=6.18\nfake line"),
        ("--tag", "kernel\u{1b}[2J=6.18"),
        ("--note", "red \u{1b}[31mtext"),
        ("--note", "two\nlines"),
    ] {
        assert_one_line_error(
            vernier(&db).args(["run", "mock", "--quiet", flag, value]),
            "control character",
        );
    }
    assert!(!db.exists());
}

#[test]
fn an_import_refuses_control_characters_in_tags_and_notes() {
    let (dir, db) = database();
    let (_, text, _) = output(vernier(&db).args(["export", "kernel=A"]));
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let fresh = dir.path().join("fresh.db");
    for (field, value) in [
        ("tags", serde_json::json!({"kernel": "A\u{1b}[2J"})),
        ("note", serde_json::json!("line\nbreak")),
    ] {
        let mut bad = doc.clone();
        bad["sessions"][0][field] = value;
        let file = dir.path().join(format!("{field}.json"));
        std::fs::write(&file, serde_json::to_vec(&bad).unwrap()).unwrap();
        assert_one_line_error(
            vernier(&fresh).arg("import").arg(&file),
            "control character",
        );
    }
    doc["sessions"][0]["note"] = serde_json::json!("fine, one line");
    let file = dir.path().join("good.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    vernier(&fresh).arg("import").arg(&file).assert().success();
}

#[test]
fn stored_control_characters_are_escaped_wherever_printed() {
    let (_dir, db) = database();
    // As an older vernier or a hand-edited database could hold them.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "UPDATE session_tags SET value = 'x' || char(27) || '[2J' || char(10) || 'y' \
         WHERE key = 'host';
         UPDATE sessions SET note = 'a' || char(27) || '[31m' || char(10) || 'b';",
    )
    .unwrap();
    drop(conn);
    for args in [
        &["show"][..],
        &["show", "latest~1"],
        &["sessions"],
        &["compare", "kernel=A", "kernel=B"],
        &["compare", "kernel=A", "kernel=B", "--format", "markdown"],
        &["env", "diff", "latest~1", "latest"],
        &["env", "show", "latest"],
    ] {
        let (code, out, err) = output(vernier(&db).args(args));
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!out.contains('\u{1b}'), "{args:?}: no raw escape: {out}");
        assert!(
            !out.contains("\ny"),
            "{args:?}: no raw line break in a tag: {out}"
        );
    }
    let (_, out, _) = output(vernier(&db).arg("show"));
    assert!(out.contains("host=x\\u{1b}[2J\\ny"), "{out}");
    assert!(out.contains("note: a\\u{1b}[31m\\nb"), "{out}");
}

#[test]
fn a_tag_value_with_a_comma_is_selectable_everywhere() {
    let (_dir, db) = database();
    vernier(&db)
        .args(["tag", "kernel=B", "release=6.18,rc1"])
        .assert()
        .success();
    let selector = "release=6.18\\,rc1";
    let (code, out, err) = output(vernier(&db).args(["export", selector]));
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["tags"]["kernel"], "B");
    for args in [
        &["show", selector][..],
        &["show", "release=6.18\\,rc1,kernel=B", "--format", "json"],
        &["compare", "kernel=A", selector],
        &["env", "show", selector],
        &["env", "diff", "kernel=A", selector],
        &["sessions", selector],
    ] {
        let (code, _, err) = output(vernier(&db).args(args));
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
    // Unescaped, the comma separates terms, and `rc1` is not KEY=VALUE.
    assert_one_line_error(
        vernier(&db).args(["show", "release=6.18,rc1"]),
        "is not KEY=VALUE",
    );
}

#[test]
fn show_and_env_take_tag_selectors_naming_one_session() {
    let (_dir, db) = database();
    let (code, out, err) = output(vernier(&db).args(["show", "kernel=A"]));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("00000000-0000-4000-a000-000000000001"),
        "{out}"
    );
    let (code, out, err) = output(vernier(&db).args(["env", "diff", "kernel=A", "kernel=B"]));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("--- kernel=A"), "{out}");
    for args in [
        &["show", "tag:host=x"][..],
        &["env", "show", "tag:host=x"],
        &["env", "diff", "tag:host=x", "kernel=B"],
    ] {
        assert_one_line_error(vernier(&db).args(args), "matches 2 sessions");
    }
}

#[test]
fn options_that_do_nothing_in_a_mode_are_errors() {
    let (_dir, db) = database();
    for flag in [
        &["--series", "stat.ctxt"][..],
        &["--monitors"],
        &["--histogram"],
    ] {
        assert_one_line_error(
            vernier(&db).args(["show", "--format", "json"]).args(flag),
            "--format json",
        );
    }
}

#[test]
fn system_reset_lists_restored_values_in_the_order_and_direction_restored() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(state.join("vernier")).unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    std::fs::write(&first, "5\n").unwrap();
    std::fs::write(&second, "on\n").unwrap();
    let change = |path: &Path, previous: &str, value: &str| vernier_setup::Change::WriteFile {
        plugin: "sysctl".into(),
        path: path.to_path_buf(),
        previous: previous.into(),
        value: value.into(),
    };
    let mut record = vernier_setup::RestoreRecord::new(vec![
        change(&first, "1", "5"),
        change(&second, "off", "on"),
    ]);
    // Written by a process that has exited.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    record.pid = child.id();
    child.wait().unwrap();
    std::fs::write(
        state.join("vernier/restore.json"),
        serde_json::to_vec(&record).unwrap(),
    )
    .unwrap();
    let (code, out, err) = output(
        vernier(&dir.path().join("results.db"))
            .env("XDG_STATE_HOME", &state)
            .args(["system", "reset"]),
    );
    assert_eq!(code, Some(0), "{err}");
    let restored: Vec<&str> = out.lines().filter(|l| l.starts_with("restored")).collect();
    assert_eq!(
        restored,
        [
            format!("restored: {}: on -> off", second.display()),
            format!("restored: {}: 5 -> 1", first.display()),
        ],
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&first).unwrap().trim(), "1");
    assert_eq!(std::fs::read_to_string(&second).unwrap().trim(), "off");
}

#[test]
fn list_and_help_show_setup_and_monitor_options() {
    let (_dir, db) = temp_db();
    let (code, list, _) = output(vernier(&db).args(["list", "-v"]));
    assert_eq!(code, Some(0));
    let (code, help, _) = output(vernier(&db).args(["run", "--help"]));
    assert_eq!(code, Some(0));
    for text in [&list, &help] {
        for expected in [
            "idle-gate",
            "threshold",
            "cooldown",
            "timeout",
            "priority",
            "cpus",
            "interrupts",
            "top",
            "every monitor takes",
            "interval",
        ] {
            assert!(text.contains(expected), "'{expected}' missing: {text}");
        }
    }
    assert!(!db.exists());
}

/// Benchmarks, setup plugins, monitors and loads: an unknown name, an unknown option and a
/// value its type refuses are said in the same words for every kind, and `list -v` shows every
/// option the same way.
#[test]
fn every_kind_of_plugin_checks_and_lists_its_options_alike() {
    let (_dir, db) = temp_db();
    // What each kind says, given to `run` beside the scripted benchmark (or as the spec).
    let cases: &[(&str, &str, &str)] = &[
        (
            "--setup",
            "cooldown:seconds=-1",
            "setup plugin 'cooldown': invalid value '-1' for option 'seconds': expected a number \
             in 0..=86400",
        ),
        (
            "--monitor",
            "stat:interval=0",
            "monitor 'stat': invalid value '0' for option 'interval': expected a number in \
             0.01..=3600",
        ),
        (
            "--load",
            "net:mbit=0",
            "load 'net': invalid value '0' for option 'mbit': expected a number in 0.01..=100000",
        ),
        (
            "",
            "yield:duration=-1",
            "benchmark 'yield': invalid value '-1' for option 'duration': expected a number in \
             0.01..=3600",
        ),
        (
            "--setup",
            "rt:priority=high",
            "setup plugin 'rt': invalid value 'high' for option 'priority': expected an integer \
             in 1..=99",
        ),
        (
            "--setup",
            "cooldown:minutes=1",
            "setup plugin 'cooldown' has no option 'minutes'; valid options: seconds, load, \
             timeout",
        ),
        (
            "--monitor",
            "stat:top=1",
            "monitor 'stat' has no option 'top'; valid options: interval",
        ),
        (
            "--load",
            "osadl:x=1",
            "load 'osadl' has no option 'x'; valid options: none",
        ),
        (
            "",
            "yield:speed=1",
            "benchmark 'yield' has no option 'speed'; valid options: workers, duration",
        ),
        (
            "--setup",
            "warp",
            "unknown setup plugin 'warp'; valid setup plugins: ",
        ),
        (
            "--monitor",
            "warp",
            "unknown monitor 'warp'; valid monitors: ",
        ),
        ("--load", "warp", "unknown load 'warp'; valid loads: "),
        ("", "warp", "unknown benchmark 'warp'; valid benchmarks: "),
    ];
    for (flag, value, expected) in cases {
        let mut cmd = vernier(&db);
        cmd.args(["run", "--quiet"]);
        match *flag {
            "" => cmd.arg(value),
            flag => cmd.args(["mock", flag, value]),
        };
        assert_one_line_error(&mut cmd, expected);
    }
    assert!(!db.exists(), "no database written");

    let (code, list, _) = output(vernier(&db).args(["list", "-v"]));
    assert_eq!(code, Some(0));
    for line in [
        // A benchmark's, a setup plugin's, a monitor's and a load's option.
        "duration   how long each worker runs (default 5 s; a number in 0.01..=3600)",
        "timeout    longest wait for the load (default 300 s; a number in 0..=86400)",
        "top        series kept, the top movers (default 5; an integer in 1..=1048576)",
        "duty       busy share of every 100 ms period (default 100 %; an integer in 1..=100)",
    ] {
        assert!(list.contains(line), "{line}: {list}");
    }
}

#[test]
fn completions_and_manual_pages_come_from_the_command_line_definition() {
    let (_dir, db) = temp_db();
    for (shell, expected) in [
        ("bash", "_vernier()"),
        ("zsh", "#compdef vernier"),
        ("fish", "complete -c vernier"),
    ] {
        let (code, out, err) = output(vernier(&db).args(["completions", shell]));
        assert_eq!(code, Some(0), "{shell}: {err}");
        assert!(out.contains(expected), "{shell}");
        assert!(
            out.contains("compare") && out.contains("interleave"),
            "{shell}"
        );
    }
    assert_one_line_error(vernier(&db).args(["completions", "cmd"]), "possible values");
    let (code, page, _) = output(vernier(&db).arg("man"));
    assert_eq!(code, Some(0));
    assert!(page.contains(".TH vernier 1"), "{page}");
    assert!(page.contains("compare"), "{page}");
    let (code, page, _) = output(vernier(&db).args(["man", "run"]));
    assert_eq!(code, Some(0));
    assert!(
        page.contains(".TH vernier\\-run 1") || page.contains(".TH vernier-run 1"),
        "{page}"
    );
    assert!(page.contains("idle\\-gate"), "{page}");
    assert_one_line_error(vernier(&db).args(["man", "bogus"]), "no command 'bogus'");
    assert!(!db.exists());
}

#[test]
fn a_spec_with_a_control_character_is_refused_before_anything_runs() {
    let (_dir, db) = temp_db();
    let out = vernier(&db)
        .args(["run", "command:cmd=printf a\rb"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "spec 'command:cmd=printf a\\rb': contains the control character CR (U+000D); a \
             spec is one line of printable text"
        ),
        "{stderr}"
    );
    assert!(!db.exists());
}
