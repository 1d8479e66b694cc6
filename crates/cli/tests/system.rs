//! Monitors, setup with restore, environment and validity checks through the CLI.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design
#![allow(clippy::print_stderr, clippy::expect_used)] // test helpers say what they skip and expect their own set-up

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use assert_cmd::Command;
use predicates::prelude::*;
use vernier_model::monitor::RunMonitorData;
use vernier_model::StoredSession;
use vernier_store::Store;
use vernier_testkit::{host_turn, temp_db};

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
    state: PathBuf,
}

fn env() -> Env {
    let (dir, db) = temp_db();
    let state = dir.path().join("state");
    Env {
        _dir: dir,
        db,
        state,
    }
}

impl Env {
    fn vernier(&self) -> Command {
        let mut cmd = Command::cargo_bin("vernier").unwrap();
        cmd.arg("--db")
            .arg(&self.db)
            .env_remove("VERNIER_DB")
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CACHE_HOME", &self.state)
            .env("VERNIER_RUN_DIR", self.run());
        cmd
    }

    /// The host's records (`VERNIER_RUN_DIR`), the test's own.
    fn run(&self) -> PathBuf {
        self.state.join("run")
    }

    /// The database's latest session, everything loaded.
    fn latest(&self) -> StoredSession {
        let store = vernier_store::SqliteStore::open_read_only(&self.db).unwrap();
        let id = store.resolve("latest").unwrap();
        store.load_session(id, vernier_store::Load::ALL).unwrap()
    }
}

/// The monitor data of every run of `session` that has some.
fn run_monitors(session: &StoredSession) -> Vec<&RunMonitorData> {
    session
        .configurations
        .iter()
        .flat_map(|c| &c.runs)
        .filter_map(|r| r.monitors.as_deref())
        .collect()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// Whether this process may open perf counters that include the kernel side, as the `perf`
/// monitor does: root, or kernel.perf_event_paranoid <= 1.
fn perf_permitted() -> bool {
    use vernier_monitor::perf::{PerfCounter, COUNTERS};
    match PerfCounter::open(&COUNTERS[3], 0) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: the perf monitor part: {e}");
            false
        }
    }
}

#[test]
fn monitors_record_series_and_summaries_of_every_measured_run() {
    let e = env();
    let perf = perf_permitted();
    let monitors = if perf {
        "stat:interval=0.01,perf,schedstat"
    } else {
        "stat:interval=0.01,schedstat"
    };
    e.vernier()
        .args([
            "run",
            "pipe:loops=20000",
            "--monitor",
            monitors,
            "--warmup",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--quiet",
        ])
        .assert()
        .success();
    let shown = e.vernier().args(["show", "--monitors"]).output().unwrap();
    assert!(shown.status.success());
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.contains("stat.ctxt"), "{shown}");
    assert_eq!(shown.contains("perf.context_switches"), perf, "{shown}");
    // /proc/schedstat exists only with CONFIG_SCHEDSTATS.
    let schedstat = Path::new("/proc/schedstat").exists();
    assert_eq!(
        shown.contains("unsupported: schedstat"),
        !schedstat,
        "{shown}"
    );
    e.vernier()
        .args(["show", "--series", "stat.ctxt"])
        .assert()
        .success()
        .stdout(predicate::str::contains("t_ms"));
    e.vernier()
        .args(["show", "--series", "stat.nothing"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--monitors"));
    let session = e.latest();
    let monitored = run_monitors(&session);
    let runs_with_data = monitored.len();
    let switches = monitored
        .iter()
        .filter_map(|m| m.summary.get("perf.context_switches").copied())
        .reduce(f64::min);
    // Measured runs only; a pipe ping-pong of 20000 round trips switches at least 20000 times.
    assert_eq!(runs_with_data, 2);
    if perf {
        let switches = switches.unwrap();
        assert!(switches >= 20_000.0, "{switches}");
    }
}

#[test]
fn interrupts_samples_no_configuration_of_runs_shorter_than_its_min_run() {
    let e = env();
    // `true` runs for about a millisecond, `sleep 0.02` for 20: the default min-run (10 ms)
    // lies between; `min-run=0` samples the short runs too. The warmup run starts the
    // configuration's run process, which makes it the longest.
    let session = |monitors: &str, cmd: &str| {
        e.vernier()
            .args(["run", &format!("command:cmd={cmd}:shell=none")])
            .args(["--monitor", monitors, "--warmup", "1", "--min-runs", "3"])
            .args(["--max-runs", "3", "--quiet"])
            .assert()
            .success();
        let runs: Vec<RunMonitorData> = run_monitors(&e.latest()).into_iter().cloned().collect();
        assert_eq!(runs.len(), 3);
        runs
    };
    for m in session("default", "true") {
        assert!(m.series.iter().all(|s| s.monitor != "interrupts"));
        let why = &m.unsupported["interrupts"];
        assert!(
            why.starts_with("not sampled in runs shorter than 10 ms"),
            "{why}"
        );
        // A short run's interrupts are still counted, in total.
        assert!(m.summary.contains_key("stat.intr"), "{:?}", m.summary);
    }
    let shown = e.vernier().args(["show", "--monitors"]).output().unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert_eq!(
        shown
            .matches("unsupported: interrupts: not sampled")
            .count(),
        1,
        "{shown}"
    );
    for (monitors, cmd) in [
        ("default,interrupts:min-run=0", "true"),
        ("default", "sleep 0.02"),
    ] {
        for m in session(monitors, cmd) {
            assert!(
                !m.unsupported.contains_key("interrupts"),
                "{cmd}: {:?}",
                m.unsupported
            );
            assert!(m.summary.contains_key("interrupts.irq_total"), "{cmd}");
        }
    }
}

#[test]
fn per_cpu_monitors_record_every_cpu_or_say_why_not() {
    let e = env();
    e.vernier()
        .args([
            "run",
            "pipe:loops=20000",
            "--monitor",
            "cpuidle,interrupts,softirqs",
            "--warmup",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--quiet",
        ])
        .assert()
        .success();
    let session = e.latest();
    let runs = run_monitors(&session);
    assert_eq!(runs.len(), 2);
    let cpus = vernier_sys::cpulist::online_cpus();
    let idle = Path::new("/sys/devices/system/cpu/cpu0/cpuidle/state0").exists();
    for m in &runs {
        assert!(m.failures.is_empty(), "{:?}", m.failures);
        for cpu in &cpus {
            assert!(m
                .summary
                .contains_key(&format!("interrupts.cpu{cpu}.irq_total")));
            assert!(m.summary.contains_key(&format!("softirqs.cpu{cpu}.TIMER")));
        }
        // Idle states where the kernel has a cpuidle driver; otherwise stored as unsupported.
        let states = m.summary.keys().filter(|k| k.starts_with("cpuidle.cpu0."));
        assert_eq!(states.count() > 0, idle, "{:?}", m.summary.keys());
        assert_eq!(
            m.unsupported.contains_key("cpuidle"),
            !idle,
            "{:?}",
            m.unsupported
        );
    }
    if idle {
        let latency = runs[0].find("cpuidle", "cpu0.POLL.latency_us");
        let names = read("/sys/devices/system/cpu/cpu0/cpuidle/state0/name");
        // State 0 is the polling state on x86 (drivers/cpuidle/poll_state.c).
        assert_eq!(latency.is_some(), names == "POLL");
    }
    // The tick and the cpuidle driver are in the stored environment, or why not.
    let env = &session.info.environment;
    assert!(env.tick.is_some() || env.unsupported.contains_key("tick"));
    assert!(env.cpuidle_driver.is_some() || env.unsupported.contains_key("cpuidle_driver"));

    let shown = e.vernier().args(["show", "--monitors"]).output().unwrap();
    assert!(shown.status.success());
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.contains("softirqs per CPU"), "{shown}");
    assert!(shown.contains("interrupts per CPU"), "{shown}");
    assert_eq!(shown.contains("cpuidle per CPU"), idle, "{shown}");
}

#[test]
fn bad_monitor_and_setup_names_change_nothing() {
    let e = env();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--monitor", "stat,bogus"],
            "valid monitors: stat, meminfo",
        ),
        (&["--monitor", "stat:interval=0"], "interval"),
        (
            &["--setup", "bogus"],
            "unknown setup plugin 'bogus'; valid setup plugins: swap-reset, drop-caches",
        ),
        (&["--setup", "cooldown:minutes=3"], "minutes"),
        // Absent on every machine (a governor or a real sysctl would apply where it exists).
        (
            &["--setup", "sysctl:vm.nonexistent=1"],
            "cannot be applied here: /proc/sys/vm/nonexistent is absent",
        ),
    ];
    for (extra, message) in cases {
        let out = e
            .vernier()
            .args(["run", "mock"])
            .args(*extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(message), "{extra:?}: {stderr}");
        assert!(!e.db.exists(), "{extra:?} created the database");
        assert!(!e.run().exists(), "{extra:?} wrote a record");
    }
    // An optional plugin that cannot be applied is skipped with a note.
    e.vernier()
        .args([
            "run",
            "mock",
            "--setup",
            "sysctl:vm.nonexistent=1?",
            "--quiet",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("optional setup 'sysctl' skipped"));
}

const STAT_INTERVAL: &str = "/proc/sys/vm/stat_interval";

/// Writes the sysctl's value back when the test ends, also when an assertion fails first, so
/// the machine is left as it was.
struct Restore(&'static str, String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, &self.1);
    }
}

/// A session that changed a real setting is interrupted; the setting is back afterwards.
#[test]
fn interrupted_session_restores_a_changed_sysctl() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: changing {STAT_INTERVAL} needs root");
        return;
    }
    let _turn = host_turn();
    let e = env();
    const SYSCTL: &str = STAT_INTERVAL;
    let before = read(SYSCTL);
    let _restore = Restore(SYSCTL, before.clone());
    let changed = if before == "3" { "4" } else { "3" };
    let bin = assert_cmd::cargo::cargo_bin("vernier");
    let mut child = std::process::Command::new(&bin)
        .arg("--db")
        .arg(&e.db)
        .env("XDG_STATE_HOME", &e.state)
        .env("XDG_CACHE_HOME", &e.state)
        .env("VERNIER_RUN_DIR", e.run())
        .args([
            "run",
            "yield:duration=0.2:workers=1",
            "--setup",
            // cooldown stands for the per-run steps: drop-caches would leave the host's
            // caches empty.
            &format!("sysctl:vm.stat_interval={changed},cooldown:seconds=0"),
            "--warmup",
            "0",
            "--min-runs",
            "100",
            "--max-runs",
            "100",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("run 2:") {
            break;
        }
    }
    // The session holds the change while it runs.
    assert_eq!(read(SYSCTL), changed);
    assert!(e.run().join("setup.json").exists());
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(read(SYSCTL), before, "the sysctl is restored");
    assert!(
        !e.run().join("setup.json").exists(),
        "clean restore removes the record"
    );
    // Every measured run records its per-run setup steps.
    let conn = rusqlite::Connection::open(&e.db).unwrap();
    let steps: String = conn
        .query_row("SELECT setup_steps FROM runs LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert!(steps.contains("cooldown"), "{steps}");
}

#[test]
fn environment_is_stored_shown_and_diffed() {
    // The environment holds sysctls that the tests taking a host turn change for a moment:
    // both sessions must see the same machine for their environments not to differ.
    let _turn = host_turn();
    let e = env();
    for kernel in ["A", "B"] {
        e.vernier()
            .args([
                "run",
                "mock",
                "--quiet",
                "--tag",
                &format!("kernel={kernel}"),
            ])
            .assert()
            .success();
    }
    e.vernier()
        .args(["env", "show", "latest"])
        .assert()
        .success()
        .stdout(predicate::str::contains("kernel_release:"))
        .stdout(predicate::str::contains("fingerprint:"))
        .stdout(predicate::str::contains("online_cpus:"));
    // Two sessions on one machine: same environment.
    e.vernier()
        .args(["env", "diff", "latest~1", "latest"])
        .assert()
        .success()
        .stdout(predicate::str::contains("do not differ"));
    // The kernel configuration is stored once per distinct text.
    let conn = rusqlite::Connection::open(&e.db).unwrap();
    let configs: i64 = conn
        .query_row("SELECT count(*) FROM kernel_configs", [], |r| r.get(0))
        .unwrap();
    let expected = i64::from(Path::new("/proc/config.gz").exists());
    assert_eq!(configs, expected);
    e.vernier().args(["env", "show"]).assert().success();
}

#[test]
fn env_diff_counts_the_fields_only_one_side_recorded_in_one_line() {
    let e = env();
    // A session of this machine (every field vernier captures), then cyclictest's JSON, which
    // says only the kernel, the host name, the architecture and cyclictest's version.
    e.vernier()
        .args(["run", "mock", "--quiet", "--tag", "side=full"])
        .assert()
        .success();
    let json = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest/2.4-h400.json");
    e.vernier().arg("import").arg(json).assert().success();
    let diff = e
        .vernier()
        .args(["env", "diff", "side=full", "source=cyclictest"])
        .assert()
        .success();
    let diff = String::from_utf8(diff.get_output().stdout.clone()).unwrap();
    let counted = diff
        .lines()
        .find(|l| l.contains(" recorded only by side=full are not compared"))
        .unwrap_or_else(|| panic!("{diff}"));
    let fields: usize = counted.split(' ').next().unwrap().parse().unwrap();
    // At least the kernel's command line and its sysctls.
    assert!(fields > 10, "{diff}");
    // What is left are the fields both recorded and the tools, which belong to a plan: the
    // mock benchmark runs none and the import ran cyclictest.
    let tools = diff.find("[tools]").unwrap_or(diff.len());
    assert!(!diff[..tools].contains("(absent)"), "{diff}");
    assert!(diff.lines().count() < 40, "{diff}");
}

#[test]
fn system_check_lists_findings_and_sessions_store_them() {
    let e = env();
    e.vernier()
        .args(["system", "check"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("virtual machine")
                .or(predicate::str::contains("no findings").not()),
        );
    e.vernier()
        .args(["run", "mock", "--quiet"])
        .assert()
        .success();
    let conn = rusqlite::Connection::open(&e.db).unwrap();
    let findings: String = conn
        .query_row("SELECT findings FROM sessions", [], |r| r.get(0))
        .unwrap();
    let parsed: Vec<serde_json::Value> = serde_json::from_str(&findings).unwrap();
    assert!(!parsed.is_empty());
    assert!(parsed
        .iter()
        .all(|f| f["severity"].is_string() && f["title"].is_string()));
    e.vernier()
        .args(["system", "tune", "--dry-run"])
        .assert()
        .success();
    e.vernier()
        .args(["system", "reset"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to restore"));
}
