//! Profiled runs end to end, through a real `perf record` (docs/profiles.md): a planted
//! difference must be found. A C helper built here spends a set share of its work in one
//! function, `planted_work` (20% in BASE, 40% in NEW, read from a file so that BASE and NEW are
//! the same configuration, as two kernels would be); `compare` must rank it first among the
//! changes of self share, with an interval that holds the planted change: +20 points of the
//! helper's work, in points of all samples the profiles hold. The same sessions then go
//! through `plot flame`, export, import and delete.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use vernier_testkit::vernier;
use vernier_testkit::{can_run, missing_programs, Program};

/// The helper: `planted SHARE_FILE`: `planted_work` gets SHARE% of the helper's CPU time, four
/// other functions of the same loop the rest in equal parts, so that none of them changes as
/// much as the planted one (each -5 points). The shares are of CPU time, read from the thread's
/// CPU clock every 200,000 iterations (about 0.2 ms), because a profile's `cpu-clock` samples
/// count CPU time: a share of iterations drifts from it by how fast each loop happens to run.
const HELPER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
#define WORK(name) \
    __attribute__((noinline)) unsigned long name(double seconds) { \
        volatile unsigned long x = 0; \
        double end = cpu_seconds() + seconds; \
        do { \
            for (unsigned long i = 0; i < 200000; i++) x += i * i; \
        } while (cpu_seconds() < end); \
        return x; \
    }
WORK(planted_work)
WORK(other_work_a)
WORK(other_work_b)
WORK(other_work_c)
WORK(other_work_d)
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    unsigned long share = 0;
    if (!f || fscanf(f, "%lu", &share) != 1) return 2;
    const double total = 0.5;
    double planted = total * share / 100, rest = (total - planted) / 4;
    unsigned long sum = planted_work(planted) + other_work_a(rest) + other_work_b(rest)
        + other_work_c(rest) + other_work_d(rest);
    return sum == 1; /* keeps the work */
}
"#;

/// Why perf cannot sample this process's children here, if it cannot.
fn perf_forbidden() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return None;
    }
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2);
    // 2 lets a user sample user space, which the planted function is in.
    (paranoid > 2).then(|| {
        format!("kernel.perf_event_paranoid is {paranoid} and this is not root (2 or less needed)")
    })
}

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn count(db: &Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

fn record(db: &Path, spec: &str, share_file: &Path, share: u32, tag: &str) {
    std::fs::write(share_file, share.to_string()).unwrap();
    ok(vernier(db)
        .args([
            "run",
            spec,
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .args([
            "--profile=4",
            "--profile-frequency",
            "999",
            "--tag",
            tag,
            "--quiet",
        ])
        .output()
        .unwrap());
}

#[test]
fn a_planted_share_is_found_first_with_its_interval() {
    let test = "a_planted_share_is_found_first_with_its_interval";
    let programs = [
        Program {
            name: "perf",
            package: "linux-perf",
        },
        Program {
            name: "cc",
            package: "gcc",
        },
    ];
    if !can_run(test, missing_programs(&programs).or_else(perf_forbidden)) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("planted.c");
    let helper = dir.path().join("planted");
    std::fs::write(&source, HELPER).unwrap();
    let built = std::process::Command::new("cc")
        .args(["-O1", "-fno-omit-frame-pointer", "-o"])
        .arg(&helper)
        .arg(&source)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let share_file = dir.path().join("share");
    let db = dir.path().join("results.db");
    // shell=none: no shell between the run and the helper; no calibration or warm-up spawns,
    // so that nearly all samples are the helper's.
    let spec = format!(
        "command:cmd={} {}:shell=none:calibration=0:spawn_warmup=0",
        helper.display(),
        share_file.display()
    );
    record(&db, &spec, &share_file, 20, "side=base");
    record(&db, &spec, &share_file, 40, "side=new");
    assert_eq!(count(&db, "profiles"), 8);

    let json: Value = serde_json::from_str(&ok(vernier(&db)
        .args(["compare", "side=base", "side=new", "--format", "json"])
        .output()
        .unwrap()))
    .unwrap();
    let profile = &json["profiles"][0];
    assert_eq!(profile["base_runs"], 4, "{profile}");
    let first = &profile["self_changes"][0];
    let (low, high) = (
        first["interval"][0].as_f64().unwrap(),
        first["interval"][1].as_f64().unwrap(),
    );
    // The planted change is 20 points of the helper's CPU time; in points of all samples it is
    // smaller by what else the profile holds (the run's process before it starts the helper,
    // the kernel's interrupts and exec): 40% of NEW's work share minus 20% of BASE's, the work
    // share being the five work functions' self share in the same profiles.
    let export: Value =
        serde_json::from_str(&ok(vernier(&db).arg("export").output().unwrap())).unwrap();
    let work_share = |tag: &str| -> f64 {
        let session = export["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tags"]["side"] == tag)
            .unwrap();
        let (mut work, mut total) = (0u64, 0u64);
        for p in session["configurations"][0]["profiles"].as_array().unwrap() {
            let frames = p["stacks"]["frames"].as_array().unwrap();
            for stack in p["stacks"]["stacks"].as_array().unwrap() {
                let (indexes, weight) = stack.as_str().unwrap().rsplit_once(' ').unwrap();
                let weight: u64 = weight.parse().unwrap();
                let leaf: usize = indexes.rsplit(';').next().unwrap().parse().unwrap();
                let name = frames[leaf].as_str().unwrap();
                if name == "planted_work" || name.starts_with("other_work_") {
                    work += weight;
                }
                total += weight;
            }
        }
        work as f64 / total as f64
    };
    let (base_work, new_work) = (work_share("base"), work_share("new"));
    let planted = 100.0 * (0.40 * new_work - 0.20 * base_work);
    // The figures the closing note quotes.
    eprintln!(
        "planted: rank 1 {} {:+.1} points [{low:.1}, {high:.1}], planted {planted:.1} points \
         (work {:.1}% of BASE's samples, {:.1}% of NEW's), overhead BASE {} NEW {}",
        first["function"],
        first["change_points"],
        base_work * 100.0,
        new_work * 100.0,
        profile["base_overhead"],
        profile["new_overhead"]
    );
    assert!(base_work > 0.5 && new_work > 0.5, "{base_work} {new_work}");
    assert_eq!(first["function"], "planted_work", "{profile:#}");
    // The interval is the profiled runs' sampling variation; the planted figure is itself
    // estimated from the same samples (the work share) and each function overshoots its CPU
    // budget by up to one round of its loop, so it is given half a point either side (a share
    // of iterations instead of CPU time missed it by 1 to 3 points).
    const ALLOWANCE: f64 = 0.5;
    assert!(
        low - ALLOWANCE < planted && planted < high + ALLOWANCE,
        "planted {planted}: {first}"
    );
    assert_eq!(first["changed"], true);
    let text = ok(vernier(&db)
        .args(["compare", "side=base", "side=new"])
        .output()
        .unwrap());
    assert!(text.contains("Where the time went"), "{text}");
    assert!(text
        .lines()
        .any(|l| l.starts_with("self") && l.contains("planted_work")));

    // Flame graphs: one side's, and the differential one.
    let svg = dir.path().join("flame.svg");
    ok(vernier(&db)
        .args(["plot", "flame", "side=new", "-o"])
        .arg(&svg)
        .output()
        .unwrap());
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("planted_work"));
    ok(vernier(&db)
        .args(["plot", "flame-diff", "side=base", "side=new", "-o"])
        .arg(&svg)
        .output()
        .unwrap());
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("planted_work"));

    // Carried by export and import, deleted with their session.
    let export = dir.path().join("export.json");
    ok(vernier(&db)
        .args(["export", "-o"])
        .arg(&export)
        .output()
        .unwrap());
    let copy = dir.path().join("copy.db");
    ok(vernier(&copy).arg("import").arg(&export).output().unwrap());
    assert_eq!(count(&copy, "profiles"), 8);
    let again: Value = serde_json::from_str(&ok(vernier(&copy)
        .args(["compare", "side=base", "side=new", "--format", "json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(again["profiles"], json["profiles"]);
    ok(vernier(&copy)
        .args(["delete", "side=base", "--yes"])
        .output()
        .unwrap());
    assert_eq!(count(&copy, "profiles"), 4);
}

#[test]
fn profile_options_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let out = vernier(&db)
        .args(["run", "mock", "--profile", "--profile-frequency", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 to 100000"), "{stderr}");
    let out = vernier(&db)
        .args(["run", "mock", "--profile", "--profile-scope", "cgroup"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid: process, system"));
    // Without perf on PATH, the error names the package.
    let out = vernier(&db)
        .env("PATH", dir.path())
        .args([
            "run",
            "mock",
            "--profile",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("linux-perf"), "{stderr}");
    assert!(!db.exists() || count(&db, "sessions") == 0);
}

/// `show` lists a session's profiled runs: per configuration their count, event, frequency and
/// overhead; a session without any shows no such list. Stored directly: no perf needed.
#[test]
fn show_lists_the_profiled_runs() {
    use vernier_store::{SqliteStore, Store};
    let (_dir, db) = vernier_testkit::temp_db();
    // Timed runs of 1,000 ns; three profiled runs of 1,100, 1,300 and 1,300 ns at 999 Hz.
    let mut session = vernier_testkit::stored_session(1_000, &[1.0, 2.0, 3.0]);
    let plain = vernier_testkit::stored_session(100_000, &[1.0, 2.0, 3.0]);
    let stacks = vernier_model::FoldedStacks::from_folded("main;work 10\n").unwrap();
    session.configurations[0].profiles = [1_100, 1_300, 1_300]
        .iter()
        .zip(0..)
        .map(|(&duration, index)| vernier_model::ProfileRecord {
            id: uuid::Uuid::from_u128(0x50 + u128::from(index)),
            index,
            event: "cpu-clock".into(),
            frequency_hz: 999,
            scope: vernier_model::ProfileScope::Process,
            started_at_ns: 10_000,
            ended_at_ns: 10_000 + duration,
            value: Some(1.5),
            stacks: stacks.clone(),
        })
        .collect();
    SqliteStore::open(&db)
        .unwrap()
        .import_sessions(&[session.clone(), plain], &BTreeMap::new())
        .unwrap();
    let text = ok(vernier(&db)
        .args(["show", &session.info.id.to_string()])
        .output()
        .unwrap());
    let at = text
        .find("profiled runs")
        .unwrap_or_else(|| panic!("{text}"));
    let row: Vec<&str> = text[at..]
        .lines()
        .nth(2)
        .unwrap_or_else(|| panic!("{text}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        row[0],
        session.configurations[0].record.key().to_string(),
        "{text}"
    );
    assert_eq!(row[1..], ["3", "cpu-clock", "999", "Hz", "1.30x"], "{text}");
    let text = ok(vernier(&db).args(["show", "latest"]).output().unwrap());
    assert!(!text.contains("profiled runs"), "{text}");
}
