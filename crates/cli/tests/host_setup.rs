//! Setup is the host's, not a user's: one restore record per host (`VERNIER_RUN_DIR`, here a
//! directory of each test's own, never /run/vernier), whoever starts vernier. Two sessions
//! that change the host under different `HOME`s: the second is refused naming the first,
//! skips or waits as `--if-busy` says; a value changed under a running session is said and the
//! runs measured so are marked; a setup that sets no host state takes no lock. As root with a
//! real sysctl (vm.stat_interval, harmless to change briefly, put back even when a test fails,
//! in the host's turn); without root the parts that need no privilege.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design
#![allow(clippy::print_stderr, clippy::expect_used)] // test helpers say what they skip and expect their own set-up

use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use vernier_testkit::{host_turn, ok, refused};

const SYSCTL: &str = "/proc/sys/vm/stat_interval";

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn read_sysctl() -> String {
    std::fs::read_to_string(SYSCTL).unwrap().trim().to_string()
}

/// The sysctl's value before the test, written back when the test ends (also when it fails),
/// in the host's turn.
struct Sysctl {
    before: String,
    _turn: std::fs::File,
}

impl Sysctl {
    /// `None` (after saying why) without root.
    fn take(test: &str) -> Option<Sysctl> {
        if !is_root() || !Path::new(SYSCTL).exists() {
            eprintln!("skipped: {test} changes {SYSCTL}, which needs root");
            return None;
        }
        let turn = host_turn();
        Some(Sysctl {
            before: read_sysctl(),
            _turn: turn,
        })
    }

    /// A value other than the one before and than `other`.
    fn another(&self, other: &str) -> String {
        (3..10)
            .map(|v| v.to_string())
            .find(|v| *v != self.before && v != other)
            .unwrap()
    }
}

impl Drop for Sysctl {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, &self.before);
    }
}

/// One user's vernier: a home, state directory and database of its own, and the host's
/// records in `run`, which users share.
struct User {
    dir: tempfile::TempDir,
    run: PathBuf,
}

impl User {
    fn new(run: &Path) -> User {
        User {
            dir: tempfile::tempdir().unwrap(),
            run: run.to_path_buf(),
        }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    fn vernier(&self) -> Command {
        let home = self.dir.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vernier"));
        cmd.arg("--db")
            .arg(self.db())
            .env_remove("VERNIER_DB")
            .env("HOME", home)
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("VERNIER_RUN_DIR", &self.run)
            .stdin(Stdio::null());
        cmd
    }

    fn output(&self, args: &[&str]) -> Output {
        self.vernier().args(args).output().unwrap()
    }

    /// The first column of every row of `sql` in this user's database, as text.
    fn texts(&self, sql: &str) -> Vec<String> {
        vernier_testkit::sqlite_texts(&self.db(), sql)
    }
}

/// A long session that holds `setup`, once it has measured two runs.
struct Running {
    child: Child,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Running {
    fn start(user: &User, setup: &str) -> Running {
        let mut child = user
            .vernier()
            .args(["run", "yield:duration=0.1:workers=1", "--setup", setup])
            .args(["--warmup", "0", "--min-runs", "300", "--max-runs", "300"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        // Held from here on, so that a failure below still ends the session.
        let mut running = Running { child, stdout };
        for line in running.stdout.by_ref() {
            if line.unwrap().contains("run 2:") {
                return running;
            }
        }
        panic!("the session ended before its second run");
    }

    /// Ends it with Ctrl-C; its exit status.
    fn interrupt(mut self) -> Option<i32> {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let _rest: Vec<String> = self.stdout.by_ref().map(|l| l.unwrap()).collect();
        self.child.wait().unwrap().code()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two users (different `HOME` and `XDG_STATE_HOME`, as root with and without `sudo -i`, or a
/// systemd unit beside a shell) on one host: while the first session holds its sysctl, the
/// second session that changes the host is refused in one line naming the first's session id
/// and pid, changes nothing and records nothing; with `--if-busy skip` it is recorded as
/// skipped for that reason; `system reset` of the other user may not undo it. Once the first
/// ends, the value is back and the second runs.
#[test]
fn a_second_session_that_changes_the_host_is_refused_naming_the_first() {
    let Some(sysctl) = Sysctl::take("a_second_session_that_changes_the_host_is_refused") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let (first, second) = (User::new(run.path()), User::new(run.path()));
    let held = sysctl.another("");
    let wanted = sysctl.another(&held);
    let session = Running::start(&first, &format!("sysctl:vm.stat_interval={held}"));
    let id = first.texts("SELECT id FROM sessions").remove(0);
    let pid = session.child.id().to_string();
    assert_eq!(read_sysctl(), held);
    assert!(run.path().join("setup.json").exists());

    let setup = format!("sysctl:vm.stat_interval={wanted}");
    let err = refused(second.output(&["run", "mock", "--quiet", "--setup", &setup]));
    assert!(
        err.contains(&id) && err.contains(&format!("pid {pid}")),
        "{err}"
    );
    assert!(err.contains("--if-busy wait"), "{err}");
    assert_eq!(read_sysctl(), held, "the refused session changed the host");
    assert!(second.texts("SELECT id FROM sessions").is_empty());

    let out = ok(second.output(&[
        "run",
        "mock",
        "--quiet",
        "--setup",
        &setup,
        "--if-busy",
        "skip",
    ]));
    assert!(out.starts_with("skipped: "), "{out}");
    let notes = second.texts("SELECT note FROM sessions WHERE status = 'skipped'");
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains(&id) && notes[0].contains("holds this machine's setup"),
        "{notes:?}"
    );
    assert_eq!(read_sysctl(), held);

    let err = refused(second.output(&["system", "reset"]));
    assert!(err.contains(&id) && err.contains(&pid), "{err}");
    assert_eq!(read_sysctl(), held);

    assert_eq!(session.interrupt(), Some(130));
    assert_eq!(
        read_sysctl(),
        sysctl.before,
        "the first session restored it"
    );
    assert!(!run.path().join("setup.json").exists());

    ok(second.output(&["run", "mock", "--quiet", "--setup", &setup]));
    assert_eq!(
        read_sysctl(),
        sysctl.before,
        "the second session restored it"
    );
    assert!(!run.path().join("setup.json").exists());
}

/// Something else changes the value a running session set, during its third measured run (the
/// benchmark's own command does it, so that the moment is exact): the session says so on its
/// output, stores a finding with the session, marks the third and every later run (found
/// after the third, before and after the others) and not the first two; `show` warns in words
/// and in JSON, the export carries the marks. At the end the value before the session is back.
#[test]
fn a_value_changed_under_a_session_is_said_and_the_runs_marked() {
    let Some(sysctl) = Sysctl::take("a_value_changed_under_a_session_is_said") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let user = User::new(run.path());
    let set = sysctl.another("");
    let other = sysctl.another(&set);
    let script = user.dir.path().join("change.sh");
    let count = user.dir.path().join("count");
    std::fs::write(
        &script,
        format!(
            "n=$(cat {count} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {count}\n\
             if [ $n -eq 3 ]; then echo {other} > {SYSCTL}; fi\n",
            count = count.display()
        ),
    )
    .unwrap();
    let out = ok(user.output(&[
        "run",
        &format!("command:cmd=sh {}:spawn_warmup=0", script.display()),
        "--setup",
        &format!("sysctl:vm.stat_interval={set}"),
        "--warmup",
        "0",
        "--min-runs",
        "5",
        "--max-runs",
        "5",
    ]));
    let said: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("something else changed the setup"))
        .collect();
    assert_eq!(said.len(), 1, "{out}");
    assert!(
        said[0].contains(&format!(
            "found after run 3: {SYSCTL} is {other} (set: {set})"
        )),
        "{out}"
    );
    assert_eq!(read_sysctl(), sysctl.before, "restored at the end");

    let marks = user.texts("SELECT setup_changed FROM runs ORDER BY idx");
    assert_eq!(marks.len(), 5);
    assert_eq!(marks[..2], ["[]", "[]"]);
    for mark in &marks[2..] {
        let changed: serde_json::Value = serde_json::from_str(mark).unwrap();
        assert_eq!(
            changed,
            serde_json::json!([{"setting": SYSCTL, "set": set, "found": other}])
        );
    }
    let findings = user.texts("SELECT findings FROM sessions").remove(0);
    let findings: Vec<serde_json::Value> = serde_json::from_str(&findings).unwrap();
    let changed: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["id"] == "setup-changed")
        .collect();
    assert_eq!(changed.len(), 1, "{findings:?}");
    assert!(
        changed[0]["detail"].as_str().unwrap().starts_with(&format!(
            "{SYSCTL} is {other} (set: {set}) after measured run 3"
        )),
        "{changed:?}"
    );

    let shown = ok(user.output(&["show"]));
    assert!(
        shown.contains(
            "3 of 5 runs measured while something else had changed a value the setup set"
        ),
        "{shown}"
    );
    assert!(shown.contains("something else changed a value the session's setup set"));
    let json: serde_json::Value =
        serde_json::from_slice(&user.output(&["show", "--format", "json"]).stdout).unwrap();
    assert_eq!(json[0]["setup_changed_runs"], 3);
    assert!(json[0]["warning_codes"]
        .as_array()
        .unwrap()
        .contains(&"setup-changed".into()));
    let export: serde_json::Value =
        serde_json::from_slice(&user.output(&["export", "latest"]).stdout).unwrap();
    let runs = export["sessions"][0]["configurations"][0]["runs"]
        .as_array()
        .unwrap();
    let exported: Vec<bool> = runs
        .iter()
        .map(|r| r.get("setup_changed").is_some())
        .collect();
    assert_eq!(exported, [false, false, true, true, true]);
}

/// A record of the host's setup held by another live process (here a `sleep` standing for a
/// session of another user): a setup that sets no host state runs beside it without a lock,
/// `--if-busy skip` and `wait` record why they did not run, `system reset` and `system tune`
/// are refused naming it; once its process is gone, `system reset` replays it. Needs no root.
#[test]
fn a_held_host_record_is_named_and_a_setup_without_host_state_needs_no_lock() {
    let run = tempfile::tempdir().unwrap();
    let user = User::new(run.path());
    let knob = user.dir.path().join("knob");
    std::fs::write(&knob, "5\n").unwrap();
    let mut sleep = Command::new("sleep").arg("600").spawn().unwrap();
    let owner = vernier_sys::process::ProcessIdentity::of(sleep.id()).unwrap();
    let mut record = vernier_setup::RestoreRecord::new(vec![vernier_setup::Change::WriteFile {
        plugin: "sysctl".into(),
        path: knob.clone(),
        previous: "1".into(),
        value: "5".into(),
    }]);
    record.pid = owner.pid;
    record.start_ticks = owner.start_ticks;
    record.session = Some("the-first-session".into());
    let path = run.path().join("setup.json");
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
    let named = format!("vernier session the-first-session (pid {})", sleep.id());

    ok(user.output(&[
        "run",
        "mock",
        "--quiet",
        "--setup",
        "cooldown:seconds=0.01,pin:cpus=0",
    ]));
    for busy in [
        &["--if-busy", "skip"][..],
        &["--if-busy", "wait", "--busy-wait", "0.3"],
    ] {
        let out = ok(user
            .vernier()
            .args(["run", "mock", "--quiet"])
            .args(busy)
            .output()
            .unwrap());
        assert!(out.starts_with("skipped: "), "{busy:?}: {out}");
    }
    let notes = user.texts("SELECT note FROM sessions WHERE status = 'skipped' ORDER BY rowid");
    assert_eq!(notes.len(), 2);
    assert!(notes[0].contains(&named), "{notes:?}");
    assert!(notes[1].ends_with("still after waiting 0.3 s"), "{notes:?}");
    for command in [&["system", "reset"][..], &["system", "tune"]] {
        let err = refused(user.output(command));
        assert!(err.contains(&named), "{command:?}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&knob).unwrap(), "5\n");
    assert!(path.exists());

    sleep.kill().unwrap();
    sleep.wait().unwrap();
    let out = ok(user.output(&["system", "reset"]));
    assert!(
        out.contains(&format!("restored: {}: 5 -> 1", knob.display())),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&knob).unwrap(), "1");
    assert!(!path.exists());
}

/// A setup that sets host state where the host's records cannot be written: refused in one
/// line naming the directory, before anything changes or the database is created. (As root,
/// so that the sysctl itself is writable; the value asked is the one it has.)
#[test]
fn a_setup_that_cannot_keep_the_host_record_is_refused_before_anything_changes() {
    let Some(sysctl) = Sysctl::take("a_setup_that_cannot_keep_the_host_record_is_refused") else {
        return;
    };
    // Nothing can be created in /proc, not even by root.
    let user = User::new(Path::new("/proc/vernier-run"));
    let err = refused(user.output(&[
        "run",
        "mock",
        "--setup",
        &format!("sysctl:vm.stat_interval={}", sysctl.before),
    ]));
    assert!(
        err.contains("/proc/vernier-run") && err.contains("cannot create it"),
        "{err}"
    );
    assert!(!user.db().exists());
    // A setup without host state needs no record there.
    ok(user.output(&["run", "mock", "--quiet", "--setup", "cooldown:seconds=0.01"]));
}

/// The environment a session records is the machine as the session found it: its sysctls are
/// read for every session (nothing tells that one changed, so no cache of them could be
/// trusted), a value changed by hand between two sessions shows in the second, and one that a
/// session's `--setup` sets for its duration shows in neither that session's environment (it
/// is recorded before the setup, which the session's setup record names) nor the next one's
/// (restored at its end).
#[test]
fn a_sysctl_changed_by_hand_or_by_a_setup_shows_as_the_next_session_finds_it() {
    let Some(sysctl) =
        Sysctl::take("a_sysctl_changed_by_hand_or_by_a_setup_shows_as_the_next_session_finds_it")
    else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let user = User::new(run.path());
    let recorded = |user: &User| -> String {
        let environment = user.texts("SELECT environment FROM sessions ORDER BY started_at_ns");
        let last: serde_json::Value =
            serde_json::from_str(environment.last().expect("a session")).unwrap();
        last["sysctls"]["vm.stat_interval"]
            .as_str()
            .unwrap_or_else(|| panic!("no vm.stat_interval in {last}"))
            .to_string()
    };
    let session = |user: &User, setup: Option<&str>| {
        let mut args = vec!["run", "mock", "--quiet", "--warmup", "0"];
        args.extend(["--min-runs", "1", "--max-runs", "1"]);
        if let Some(setup) = setup {
            args.extend(["--setup", setup]);
        }
        ok(user.output(&args));
    };
    let by_hand = sysctl.another("");
    std::fs::write(SYSCTL, &by_hand).unwrap();
    session(&user, None);
    assert_eq!(recorded(&user), by_hand);
    let again = sysctl.another(&by_hand);
    std::fs::write(SYSCTL, &again).unwrap();
    session(&user, None);
    assert_eq!(
        recorded(&user),
        again,
        "a second session sees the value changed by hand"
    );

    let set = sysctl.another(&again);
    session(&user, Some(&format!("sysctl:vm.stat_interval={set}")));
    assert_eq!(
        recorded(&user),
        again,
        "recorded before the session's own setup"
    );
    assert_eq!(read_sysctl(), again, "restored at the session's end");
    session(&user, None);
    assert_eq!(recorded(&user), again);
}
