//! The `compile` benchmark end to end: its options checked when the plan is made (exit 2),
//! the work directory prepared once per session and removed on every way out, on a fake kernel
//! tree whose Makefile only touches files; and, ignored by default because it takes minutes,
//! a real tinyconfig build of Debian's linux-source tarball, which `.ci/run` runs. The plan
//! refuses `compile` without the kernel build's tools (flex, bison, libelf's headers, ...),
//! which the README's set-up does not install: outside CI the tests that get that far say
//! `skipped: ...` without them.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use vernier_testkit::{can_run, vernier};

/// A database and a temporary directory of its own for the session's work directory.
struct Scratch {
    _dir: tempfile::TempDir,
    db: PathBuf,
    tmp: PathBuf,
}

fn scratch() -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    Scratch {
        db: dir.path().join("results.db"),
        tmp,
        _dir: dir,
    }
}

impl Scratch {
    /// `vernier run SPEC` with `runs` measured runs and no warmup; the exit code and stderr.
    fn run(&self, spec: &str, runs: u32) -> (Option<i32>, String) {
        let out = vernier(&self.db)
            .env("TMPDIR", &self.tmp)
            .args(["run", spec, "--warmup", "0", "--quiet"])
            .args(["--min-runs", &runs.to_string()])
            .args(["--max-runs", &runs.to_string()])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// What is left in the temporary directory.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(&self.tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    fn query(&self, sql: &str) -> Vec<String> {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}

/// A fake kernel tree: the make targets and `scripts/config` that `compile` calls, each
/// appending its name to the file `calls` of the original tree (written after the tree was
/// copied into the work directory, so the copy does not see it).
/// `vmlinux` fails when `fail` says so: `warmup` (the first build, in preparation) or `run`
/// (a build after it).
fn fake_tree(fail: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let calls = calls.display();
    let vmlinux_fails = match fail {
        "warmup" => "\tfalse\n",
        "run" => "\t@test ! -e built || (echo 'error: broken build' >&2; false)\n",
        _ => "",
    };
    let makefile = format!(
        "tinyconfig defconfig allnoconfig olddefconfig:\n\
         \techo $@ >> {calls}; touch .config\n\
         clean:\n\
         \techo $@ >> {calls}; rm -f vmlinux\n\
         vmlinux:\n\
         {vmlinux_fails}\
         \techo $@ >> {calls}; touch vmlinux built\n"
    );
    std::fs::write(dir.path().join("Makefile"), makefile).unwrap();
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    let config = dir.path().join("scripts/config");
    std::fs::write(
        &config,
        format!("#!/bin/sh\necho config \"$@\" >> {calls}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Whether `test`, which needs a plan of `compile` to be accepted, can run here.
fn has_build_tools(test: &str) -> bool {
    can_run(
        test,
        vernier_bench::compile::check_build_tools()
            .err()
            .map(missing_tools),
    )
}

/// What the plan says of the missing build tools, as the CLI prints it.
fn missing_tools(e: vernier_bench::BenchError) -> String {
    match e {
        vernier_bench::BenchError::Options(message) => message,
        other => other.to_string(),
    }
}

fn spec(tree: &Path, rest: &str) -> String {
    format!("compile:source={}{rest}", tree.display())
}

#[test]
fn bad_options_and_a_missing_source_exit_2_before_anything_runs() {
    let s = scratch();
    let tree = fake_tree("");
    // The source's hash is compared after the build tools are checked: without them, that
    // spec is refused for their sake.
    let sha_refusal = match vernier_bench::compile::check_build_tools() {
        Ok(()) => "source_sha256 is '0000' in the spec but '".to_string(),
        Err(e) => missing_tools(e),
    };
    let cases = [
        (
            spec(tree.path(), ":config=oldconfig"),
            "invalid value 'oldconfig' for option 'config': expected one of defconfig, \
             tinyconfig, allnoconfig",
        ),
        (
            spec(tree.path(), ":jobs=0"),
            "invalid value '0' for option 'jobs'",
        ),
        (
            spec(tree.path(), ":target=-j99"),
            "target '-j99' is not a make target",
        ),
        (
            spec(tree.path(), ":source_sha256=0000"),
            sha_refusal.as_str(),
        ),
        (
            "compile:source=/nonexistent/linux.tar.xz".to_string(),
            "source '/nonexistent/linux.tar.xz' does not exist (give a kernel tarball or \
             directory)",
        ),
    ];
    for (spec, message) in cases {
        let (code, stderr) = s.run(&spec, 1);
        assert_eq!(code, Some(2), "{spec}: {stderr}");
        assert!(stderr.contains(message), "{spec}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{spec}: {stderr}");
    }
    assert!(!s.db.exists(), "nothing may be recorded");
    assert!(s.leftovers().is_empty());
}

#[test]
fn prepares_once_for_a_sweep_and_removes_the_work_directory() {
    if !has_build_tools("prepares_once_for_a_sweep_and_removes_the_work_directory") {
        return;
    }
    let s = scratch();
    let tree = fake_tree("");
    let (code, stderr) = s.run(&spec(tree.path(), ":config=tinyconfig:jobs=1,2"), 2);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
    // One preparation for both configurations (warm-up build included), then per run a clean
    // and a build.
    let calls = std::fs::read_to_string(tree.path().join("calls")).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(
        calls[..4],
        [
            "tinyconfig",
            "config --disable WERROR",
            "olddefconfig",
            "vmlinux"
        ]
    );
    assert_eq!(calls[4..], ["clean", "vmlinux"].repeat(4));
    // The options hold the facts: the source's hash and the toolchain.
    let options = s.query("SELECT options FROM configurations ORDER BY position");
    assert_eq!(options.len(), 2);
    for o in &options {
        let o: serde_json::Value = serde_json::from_str(o).unwrap();
        assert_eq!(o["source_sha256"].as_str().unwrap().len(), 64, "{o}");
        assert!(o["gcc"].as_str().unwrap().contains("gcc"), "{o}");
        assert_ne!(o["binutils"], "auto", "{o}");
    }
    let metrics = s.query("SELECT DISTINCT metric FROM run_metric_values ORDER BY metric");
    assert_eq!(metrics, ["system_time", "time", "user_time"]);
    let tools = s.query("SELECT environment FROM sessions");
    assert!(tools[0].contains("\"gcc\""), "{}", tools[0]);
}

#[test]
fn the_work_directory_is_removed_when_preparation_or_a_run_fails() {
    if !has_build_tools("the_work_directory_is_removed_when_preparation_or_a_run_fails") {
        return;
    }
    for fail in ["warmup", "run"] {
        let s = scratch();
        let tree = fake_tree(fail);
        let (code, stderr) = s.run(&spec(tree.path(), ":config=tinyconfig"), 1);
        assert_eq!(code, Some(2), "{fail}: {stderr}");
        let expected = if fail == "warmup" {
            "preparation failed: the warm-up build (make -j"
        } else {
            "exited with status 2: error: broken build"
        };
        assert!(stderr.contains(expected), "{fail}: {stderr}");
        assert!(s.leftovers().is_empty(), "{fail}: {:?}", s.leftovers());
    }
}

/// A real tinyconfig build of Debian's linux-source tarball: unpacked, configured and built
/// once to warm up, then cleaned and built once more, timed. Minutes on two CPUs; `.ci/run`
/// installs the source and the tools and runs it.
#[test]
#[ignore = "builds a real kernel (minutes); run by .ci/run"]
fn builds_a_real_kernel_with_tinyconfig() {
    if !has_build_tools("builds_a_real_kernel_with_tinyconfig") {
        return;
    }
    let s = scratch();
    let (code, stderr) = s.run("compile:config=tinyconfig", 1);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
    let times = s.query(
        "SELECT CAST(v.value AS TEXT) FROM run_metric_values v JOIN runs r ON r.key = v.run_key \
         WHERE v.metric = 'time' AND r.warmup = 0",
    );
    assert_eq!(times.len(), 1);
    let time: f64 = times[0].parse().unwrap();
    assert!(
        time > 1.0,
        "a kernel build takes more than a second: {time}"
    );
}
