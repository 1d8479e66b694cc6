//! Paths that are not what they seem and small corners of the commands: a file of any size
//! that is not a vernier database is never written over; a path ending in `/` names a
//! directory; copies (`sync --to`, `merge -o`) are never put in a directory made on the way;
//! `report -o .` and a report whose marker is empty are refused in words; `--seed` names its
//! range; removing a tag that no selected session carries is an error. Every refusal writes
//! nothing.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use vernier_testkit::{ok, record_mock_session, refused, temp_db, vernier_no_input};

/// A directory with a database of one recorded session (`kernel=A`).
fn database() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = temp_db();
    record_mock_session(&db, "kernel=A");
    (dir, db)
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_file_that_is_not_a_database_is_never_written_over_whatever_its_size() {
    let (dir, db) = database();
    for bytes in [&b"x"[..], b"\n", b"SQLite format 3", &[b'a'; 600]] {
        let text = dir.path().join("one.txt");
        std::fs::write(&text, bytes).unwrap();
        let db_arg = db.to_str().unwrap();
        let text_arg = text.to_str().unwrap();
        let attempts: [&[&str]; 4] = [
            &["run", "mock:values=1/2", "--quiet"],
            &["sync", "--from", db_arg, "--to", text_arg],
            &["merge", db_arg, "--into", text_arg],
            &["tag", "latest", "x=1"],
        ];
        for args in attempts {
            let err = refused(vernier_no_input(&text).args(args).output().unwrap());
            assert!(
                err.contains("one.txt is not an SQLite database"),
                "{} bytes, {args:?}: {err}",
                bytes.len()
            );
            assert_eq!(std::fs::read(&text).unwrap(), bytes, "{args:?}");
        }
    }
}

#[test]
fn a_path_ending_in_a_slash_names_a_directory_and_nothing_is_made() {
    let (dir, db) = database();
    let before = names(dir.path());
    let slashed = format!("{}/new/", dir.path().display());
    let db_arg = db.to_str().unwrap();
    let err = refused(
        vernier_no_input(Path::new(&slashed))
            .args(["run", "mock:values=1/2", "--quiet"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("new/ is a directory's name (it ends with '/')"),
        "{err}"
    );
    for args in [
        &["sync", "--to", &slashed][..],
        &["merge", db_arg, "-o", &slashed],
    ] {
        let err = refused(vernier_no_input(&db).args(args).output().unwrap());
        assert!(
            err.contains("a directory's name (it ends with '/')"),
            "{err}"
        );
    }
    assert_eq!(names(dir.path()), before);
}

#[test]
fn a_copy_is_never_put_in_a_directory_made_on_the_way() {
    let (dir, db) = database();
    let before = names(dir.path());
    let target = dir.path().join("share/central.db");
    let target_arg = target.to_str().unwrap();
    let db_arg = db.to_str().unwrap();
    for args in [
        &["sync", "--to", target_arg][..],
        &["merge", db_arg, "-o", target_arg],
    ] {
        let err = refused(vernier_no_input(&db).args(args).output().unwrap());
        assert!(
            err.contains(&format!(
                "the directory {} does not exist",
                dir.path().join("share").display()
            )),
            "{err}"
        );
    }
    assert_eq!(names(dir.path()), before);
    // In a directory that exists, both make the file.
    let target = dir.path().join("central.db");
    ok(vernier_no_input(&db)
        .args(["sync", "--to", target.to_str().unwrap()])
        .output()
        .unwrap());
    assert!(target.is_file());
}

#[test]
fn a_report_into_the_current_directory_or_over_an_empty_marker_is_refused_in_words() {
    let (dir, db) = database();
    let site = dir.path().join("site");
    ok(vernier_no_input(&db)
        .args(["report", "-o", site.to_str().unwrap()])
        .output()
        .unwrap());
    let index = std::fs::read(site.join("index.html")).unwrap();
    for target in [".", "./"] {
        let err = refused(
            vernier_no_input(&db)
                .current_dir(&site)
                .args(["report", "-o", target])
                .output()
                .unwrap(),
        );
        assert!(
            err.contains("it is the current directory or holds it"),
            "{err}"
        );
        assert!(err.contains("cd .. && vernier report -o NAME"), "{err}");
    }
    assert_eq!(std::fs::read(site.join("index.html")).unwrap(), index);
    // From outside, the same directory is replaced.
    ok(vernier_no_input(&db)
        .current_dir(dir.path())
        .args(["report", "-o", "./site/"])
        .output()
        .unwrap());
    // A marker that is there but empty is said to be so, not missing.
    std::fs::write(site.join(".vernier-report"), "").unwrap();
    let err = refused(
        vernier_no_input(&db)
            .args(["report", "-o", site.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("its .vernier-report is empty"), "{err}");
    assert!(site.join("index.html").is_file());
}

#[test]
fn a_seed_out_of_range_names_the_range() {
    let (_dir, db) = database();
    for seed in ["-1", "18446744073709551616", "x"] {
        let err = refused(
            vernier_no_input(&db)
                .args(["run", "mock", "--interleave", "--seed", seed])
                .output()
                .unwrap(),
        );
        assert!(
            err.contains(&format!("{seed} is not in 0..=18446744073709551615")),
            "{err}"
        );
    }
}

/// `git tag -d nosuch` fails ("tag 'nosuch' not found"); so does removing a tag that none of
/// the selected sessions carries, and nothing else given is changed. A tag that only some of
/// them carry is removed from those, and the others' lines say they had none.
#[test]
fn removing_a_tag_no_selected_session_carries_is_an_error_and_changes_nothing() {
    let (_dir, db) = database();
    record_mock_session(&db, "kernel=B");
    let tags = || {
        ok(vernier_no_input(&db).arg("sessions").output().unwrap())
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().last().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    ok(vernier_no_input(&db)
        .args(["tag", "latest", "draft=1"])
        .output()
        .unwrap());
    let before = tags();
    let err = refused(
        vernier_no_input(&db)
            .args(["tag", "latest", "x=1", "--remove", "nosuch"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("no tag 'nosuch' to remove: the selected session has none of that key"),
        "{err}"
    );
    assert_eq!(tags(), before, "x=1 was not set");
    // Two sessions, one with the tag: removed from it, said of the other, status 0.
    for selector in ["latest", "latest~1"] {
        ok(vernier_no_input(&db)
            .args(["tag", selector, "group=g"])
            .output()
            .unwrap());
    }
    let out = ok(vernier_no_input(&db)
        .args(["tag", "group=g", "--remove", "draft"])
        .output()
        .unwrap());
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(
        out.matches("(it had no tag 'draft' to remove)").count(),
        1,
        "{out}"
    );
    assert!(!out.contains("draft=1"), "{out}");
    let err = refused(
        vernier_no_input(&db)
            .args(["tag", "group=g", "--remove", "draft"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("none of the 2 selected sessions has one of that key"),
        "{err}"
    );
}
