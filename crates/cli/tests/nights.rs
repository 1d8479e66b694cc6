//! A farm's nights replayed: 90 series (30 benchmarks on 3 machines) grow night by night, and
//! after each night the nightly `history` of every series and a `compare` of the night with the
//! one before run on the growing database under a watchdog. No night may hang: a t quantile at
//! huge degrees of freedom once looped for ever (crates/stats, `t_quantile`), which only a
//! series of many runs, or of no noise at all, reached after months.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use uuid::Uuid;
use vernier_stats::SeededRng;
use vernier_testkit::{synthetic_session, temp_db, vernier_command};

const HOSTS: [&str; 3] = ["rt-box1", "rt-box2", "rt-box3"];
const BENCHMARKS: usize = 30;
const NIGHTS: usize = 16;
const NIGHT_NS: i64 = 86_400_000_000_000;

/// How long one command of a night may take before it counts as hung: far beyond what it
/// takes (well under a second on this database in a debug build) on a loaded machine.
const WATCHDOG: Duration = Duration::from_secs(120);

/// The values of benchmark `b` on host `h` in night `night`: every fifth series has no noise
/// at all (zero variance), every seventh 1,000 runs (huge degrees of freedom), the others 10
/// runs with 1% noise; every third slows down by 10% from night 8 on.
fn values(rng: &mut SeededRng, b: usize, h: usize, night: usize) -> Vec<f64> {
    let level = (1.0 + b as f64 / 10.0 + h as f64 / 100.0)
        * if b.is_multiple_of(3) && night >= 8 {
            1.1
        } else {
            1.0
        };
    let (runs, noise) = match b {
        _ if b.is_multiple_of(5) => (10, 0.0),
        _ if b.is_multiple_of(7) => (1_000, 0.01),
        _ => (10, 0.01),
    };
    (0..runs)
        .map(|_| level * (1.0 + noise * (rng.index(2001) as f64 / 1000.0 - 1.0)))
        .collect()
}

/// Runs `vernier ARGS` on `db`, its output into files (a pipe left unread would stall it and
/// look like a hang), and fails the test if it has not ended within [`WATCHDOG`] (killing it)
/// or did not succeed. Returns its standard output.
fn within_watchdog(db: &Path, night: usize, args: &[&str]) -> String {
    let dir = db.parent().unwrap();
    let stdout = dir.join("stdout");
    let stderr = dir.join("stderr");
    let mut child = vernier_command(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("night {night}: vernier {args:?} did not end within {WATCHDOG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        status.success(),
        "night {night}: vernier {args:?}: {status}\n{err}"
    );
    std::fs::read_to_string(&stdout).unwrap()
}

#[test]
fn no_night_of_a_farm_hangs() {
    let (_dir, db) = temp_db();
    let mut store = vernier_store::SqliteStore::open(&db).unwrap();
    let mut rng = SeededRng::new(27);
    for night in 0..NIGHTS {
        let mut sessions = Vec::new();
        for (h, host) in HOSTS.into_iter().enumerate() {
            for b in 0..BENCHMARKS {
                let values = values(&mut rng, b, h, night);
                let name = format!("bench{b:02}");
                let at = 1_700_000_000_000_000_000
                    + night as i64 * NIGHT_NS
                    + (h * BENCHMARKS + b) as i64 * 10_000_000;
                let mut session = synthetic_session(&values)
                    .benchmark(&name)
                    .started_at(at)
                    .hostname(host)
                    .build(Uuid::new_v4);
                session
                    .info
                    .tags
                    .insert("night".to_string(), night.to_string());
                sessions.push(session);
            }
        }
        use vernier_store::Store;
        store.import_sessions(&sessions, &BTreeMap::new()).unwrap();

        let history: serde_json::Value = serde_json::from_str(&within_watchdog(
            &db,
            night,
            &["history", "--format", "json"],
        ))
        .unwrap();
        assert_eq!(
            history["series"].as_array().unwrap().len(),
            HOSTS.len() * BENCHMARKS,
            "night {night}"
        );
        if night > 0 {
            let host = HOSTS[night % HOSTS.len()];
            let compared = within_watchdog(
                &db,
                night,
                &[
                    "compare",
                    &format!("host={host},night={}", night - 1),
                    &format!("host={host},night={night}"),
                    "--format",
                    "json",
                ],
            );
            assert!(!compared.is_empty(), "night {night}");
        }
    }
}
