//! Every size a user or a file controls is bounded, with the bound in the message, and a
//! refused input writes nothing: figure sizes, suite files, texts and numbers of imported
//! files. What is stored already is shown whatever its size (a host name of 70,000
//! characters made `vernier sessions` panic for the whole database).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use vernier_testkit::{ok, record_mock_session, refused, temp_db, vernier_no_input};

/// The cyclictest --json fixture of the model's parser, edited by `edit` and written to `dir`.
fn cyclictest_json(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest/2.4-h400.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    edit(&mut doc);
    let path = dir.join("cyclictest.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn figure_sizes_are_bounded_before_anything_is_drawn() {
    let (dir, db) = temp_db();
    record_mock_session(&db, "kernel=A");
    let png = dir.path().join("x.png");
    let png_arg = png.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--width", "100000", "--height", "100000"],
            "100000 is not in 200..=16384",
        ),
        (
            &["--width", "4294967295"],
            "4294967295 is not in 200..=16384",
        ),
        (&["--height", "16385"], "16385 is not in 150..=16384"),
        (
            &["--width", "10000", "--height", "10000"],
            "figure size 10000x10000 is too large for a PNG: at most 33554432 pixels",
        ),
    ];
    for (size, expected) in cases {
        let err = refused(
            vernier_no_input(&db)
                .args(["plot", "box", "latest", "-o", png_arg])
                .args(size)
                .output()
                .unwrap(),
        );
        assert!(err.contains(expected), "{size:?}: {err}");
        assert!(!png.exists());
    }
    // The same size as an SVG has no buffer of pixels, and is drawn.
    let svg = dir.path().join("x.svg");
    ok(vernier_no_input(&db)
        .args(["plot", "box", "latest", "-o", svg.to_str().unwrap()])
        .args(["--width", "10000", "--height", "10000"])
        .output()
        .unwrap());
    assert!(svg.is_file());
}

#[test]
fn a_suite_file_is_read_up_to_its_bound() {
    let (_dir, db) = temp_db();
    let err = refused(
        vernier_no_input(&db)
            .args(["run", "--suite", "/dev/zero"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains(
            "cannot read suite /dev/zero: it holds more than 1048576 bytes (1 MiB), the most a \
             suite file may"
        ),
        "{err}"
    );
    assert!(!db.exists());
}

#[test]
fn imported_texts_and_numbers_are_bounded_and_nothing_is_written() {
    let (dir, db) = temp_db();
    let import = |file: &Path| {
        refused(
            vernier_no_input(&db)
                .arg("import")
                .arg(file)
                .output()
                .unwrap(),
        )
    };
    let long_host = cyclictest_json(dir.path(), |doc| {
        doc["sysinfo"]["nodename"] = "h".repeat(70_000).into();
    });
    let err = import(&long_host);
    assert!(
        err.contains("field 'environment.hostname' is 70000 bytes long, longer than 255"),
        "{err}"
    );
    // Counts whose sum overflows 2^64 made the import panic.
    let huge = cyclictest_json(dir.path(), |doc| {
        let thread = &mut doc["thread"]["0"];
        thread["histogram"] = serde_json::json!({"12": u64::MAX, "14": u64::MAX});
        thread["cycles"] = u64::MAX.into();
    });
    let err = import(&huge);
    assert!(err.contains("more than 1125899906842624 (2^50)"), "{err}");
    // hyperfine times beyond the longest duration vernier takes.
    let hyperfine = dir.path().join("hyperfine.json");
    std::fs::write(
        &hyperfine,
        r#"{"results": [{"command": "sleep 1", "times": [1.0, 1e300]}]}"#,
    )
    .unwrap();
    let err = import(&hyperfine);
    assert!(
        err.contains(
            "field 'values.time' is 1e300, expected a positive duration in s of at most 1e9"
        ),
        "{err}"
    );
    assert!(!db.exists(), "a refused import wrote the database");
}

#[test]
fn a_stored_text_of_any_length_is_listed() {
    let (_dir, db) = temp_db();
    record_mock_session(&db, "kernel=A");
    // Stored by an older vernier, or by another program: whatever the database holds.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE sessions SET hostname = ?1",
        [format!("{}tail", "h".repeat(70_000))],
    )
    .unwrap();
    drop(conn);
    let list = ok(vernier_no_input(&db).arg("sessions").output().unwrap());
    let row = list.lines().nth(1).unwrap();
    assert!(row.contains(&format!("{}…", "h".repeat(63))), "{row}");
    assert!(!row.contains("tail"), "{row}");
    assert!(row.chars().count() < 300, "{}", row.chars().count());
}

/// Counts at the top of their type are bounds like any other: `--min-runs` and `--max-runs`
/// of 4294967295 with a warmup made the estimate of the time left overflow (a panic).
#[test]
fn run_counts_at_their_largest_end_by_time() {
    let (_dir, db) = temp_db();
    let out = ok(vernier_no_input(&db)
        .args([
            "run",
            "mock:values=1/2",
            "--warmup",
            "1",
            "--max-time",
            "0.3",
        ])
        .args(["--min-runs", "4294967295", "--max-runs", "4294967295"])
        .output()
        .unwrap());
    assert!(out.contains("max-time"), "{out}");
}
