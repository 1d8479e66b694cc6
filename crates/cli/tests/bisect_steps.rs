//! `vernier bisect` step by step, without timing: a git repository whose commits hold a level
//! (100 up to commit `FIRST_BAD`, 110 from it on), "built" by copying it, and a benchmark of
//! the user's own that reports the built level (with a tiny deterministic spread), so every
//! bisection of it takes the same calls.
//!
//! - A bisection interrupted in a session (SIGINT) and resumed, and one that stops after every
//!   step (a fake `--boot` that "reboots" between steps), name the same first bad commit with
//!   the same calls and sessions as one run at once; the interrupted session is not counted.
//! - Each commit is built once (the build cache), however often the rule returns to it and
//!   however often the bisection is resumed; `bisect reset` removes the cache.
//! - Kernels (`--boot`): a fake boot command records its call and the release to come up; the
//!   test "boots" by rewriting the release and the boot id that vernier reads
//!   (`VERNIER_TEST_KERNEL_ROOT`). A wrong kernel, a boot that did not happen and a boot command
//!   that failed are recorded and booted again, a commit whose kernel fails twice is skipped,
//!   and a resume twice in one boot measures nothing twice; no session ever runs on a kernel
//!   other than its commit's.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vernier_testkit::{
    can_run, missing_programs, ok, sqlite_texts, temp_db, vernier_command, Program,
};

const COMMITS: usize = 64;
const FIRST_BAD: usize = 37;
const SPEC: &str = "level";

/// The release each commit's kernel reports: its short hash, as the benchmark notes it.
const KERNEL_RELEASE: &str = "echo 6.18.0-$(git rev-parse --short=12 HEAD)";

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// One bisection's world: the repository, the database, the state directory, the fake
/// kernel's files and the logs the scripts keep.
struct World {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    db: PathBuf,
    repo: PathBuf,
    commits: Vec<String>,
}

impl World {
    fn new() -> Option<World> {
        let missing = missing_programs(&[Program {
            name: "git",
            package: "git",
        }]);
        if !can_run("bisect_steps", missing) {
            return None;
        }
        let (tmp, db) = temp_db();
        let dir = tmp.path().to_path_buf();
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["config", "user.email", "test@example.org"]);
        git(&repo, &["config", "user.name", "test"]);
        for i in 0..=COMMITS {
            let level = if i >= FIRST_BAD { 110 } else { 100 };
            std::fs::write(repo.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(repo.join("revision"), format!("{i}\n")).unwrap();
            git(&repo, &["add", "level", "revision"]);
            git(&repo, &["commit", "-q", "-m", &format!("revision {i}")]);
        }
        let commits = git(&repo, &["rev-list", "--reverse", "HEAD"])
            .lines()
            .map(str::to_string)
            .collect();
        // The benchmark: the level built in the session's directory (the commit's work tree),
        // spread by at most 0.2% from a counter; each run notes the kernel it ran on.
        let benchmarks = dir.join("vernier/benchmarks");
        std::fs::create_dir_all(&benchmarks).unwrap();
        let d = dir.display().to_string();
        executable(
            &benchmarks.join("level"),
            &format!(
                r#"#!/bin/sh
set -eu
case "$1" in
describe)
    echo '{{"description": "the level built", "version": "1", "options": [],
           "metrics": [{{"name": "time", "unit": "s", "better": "lower"}}], "primary": "time"}}'
    ;;
run)
    n=$(cat {d}/counter 2>/dev/null || echo 0)
    echo $((n + 1)) > {d}/counter
    if [ -e {d}/interrupt-at ] && [ "$n" = "$(cat {d}/interrupt-at)" ]; then
        while [ ! -s {d}/vernier.pid ]; do sleep 0.01; done
        kill -INT "$(cat {d}/vernier.pid)"
    fi
    release=$(cat {d}/kernel/proc/sys/kernel/osrelease 2>/dev/null || echo none)
    echo "$release $(git rev-parse --short=12 HEAD)" >> {d}/measured
    awk -v l="$(cat built)" -v n="$n" 'BEGIN {{ printf "{{\"time\": %.6f}}\n", l * (1 + (n % 5 - 2) / 1000) }}'
    ;;
esac
"#
            ),
        );
        let world = World {
            _dir: tmp,
            dir,
            db,
            repo,
            commits,
        };
        world.set_kernel("6.1.0-host", "boot-0");
        // The fake boot command: it records its call and the release to come up, and fails
        // once when told to.
        executable(
            &world.dir.join("fakeboot"),
            &format!(
                "#!/bin/sh\n\
                 echo \"$VERNIER_BISECT_COMMIT $VERNIER_BISECT_RELEASE $VERNIER_BISECT_ATTEMPT \
                 $(pwd)\" >> {d}/boots\n\
                 echo \"$VERNIER_BISECT_RELEASE\" > {d}/pending\n\
                 if [ -e {d}/fail-next ]; then rm {d}/fail-next; exit 1; fi\n"
            ),
        );
        Some(world)
    }

    fn set_kernel(&self, release: &str, boot_id: &str) {
        let k = self.dir.join("kernel/proc/sys/kernel");
        std::fs::create_dir_all(k.join("random")).unwrap();
        std::fs::write(k.join("osrelease"), format!("{release}\n")).unwrap();
        std::fs::write(k.join("random/boot_id"), format!("{boot_id}\n")).unwrap();
    }

    fn command(&self) -> Command {
        let mut c = vernier_command(&self.db);
        c.env("VERNIER_STATE_DIR", self.dir.join("state"))
            .env("VERNIER_TEST_KERNEL_ROOT", self.dir.join("kernel"))
            .stdin(std::process::Stdio::null());
        c
    }

    fn bisect(&self, args: &[&str]) -> Output {
        self.command().arg("bisect").args(args).output().unwrap()
    }

    fn start(&self, extra: &[&str]) -> Output {
        let mut c = self.command();
        c.args(["bisect", "start", "--repo"])
            .arg(&self.repo)
            .args(["--good", &self.commits[0], "--bad", "HEAD"])
            .args([
                "--build",
                &format!(
                    "git rev-parse HEAD >> {}/builds && cp level built",
                    self.dir.display()
                ),
            ])
            .args(["--warmup", "0", "--min-runs", "3", "--max-runs", "3"])
            .args(extra)
            .arg(SPEC);
        c.output().unwrap()
    }

    /// `start` with the fake boot command, each commit's kernel named by its short hash.
    fn start_with_fake_boot(&self) -> Output {
        let boot = format!("{}/fakeboot", self.dir.display());
        self.start(&["--boot", &boot, "--kernel-release", KERNEL_RELEASE])
    }

    /// "Boots": the release the last boot command asked for (or `release`, a wrong kernel),
    /// with a new boot id.
    fn boot_pending(&self, release: Option<&str>, boot_id: &str) {
        let pending = std::fs::read_to_string(self.dir.join("pending")).unwrap();
        self.set_kernel(release.unwrap_or(pending.trim()), boot_id);
    }

    fn lines(&self, file: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(file))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The calls of a finished bisection's report ("steps:" lines: index, commit, call) and its
/// sessions spent.
fn steps_and_spent(report: &str) -> (Vec<(String, String)>, u32) {
    let steps = report
        .lines()
        .skip_while(|l| *l != "steps:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words[0].to_string(), words[words.len() - 1].to_string())
        })
        .collect();
    let spent = report
        .lines()
        .find_map(|l| l.strip_prefix("spent: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    (steps, spent)
}

/// The statuses of the database's sessions (all of them the bisection's).
fn statuses(world: &World) -> Vec<String> {
    if !world.db.exists() {
        return Vec::new();
    }
    sqlite_texts(&world.db, "SELECT status FROM sessions")
}

#[test]
fn a_bisection_interrupted_or_stopped_at_every_step_takes_the_same_calls() {
    let Some(reference) = World::new() else {
        return;
    };
    let once = ok(reference.start(&[]));
    let named = |w: &World| {
        format!(
            "first bad commit: {} (commit {FIRST_BAD})",
            w.commits[FIRST_BAD]
        )
    };
    assert!(once.contains(&named(&reference)), "{once}");
    let (steps, spent) = steps_and_spent(&once);
    assert!(steps.len() >= 3, "{once}");
    // Each commit visited was built once, the ends too, though the rule returns to them.
    let builds = reference.lines("builds");
    let mut distinct = builds.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(builds.len(), distinct.len(), "{builds:?}");
    assert!(builds.contains(&reference.commits[0]) && builds.contains(&reference.commits[COMMITS]));
    let status = ok(reference.bisect(&["status"]));
    assert!(
        status.contains(&format!("build cache: {} commits built", builds.len())),
        "{status}"
    );

    // Interrupted by SIGINT in the 8th run (in a session after the ends'), then resumed.
    let Some(interrupted) = World::new() else {
        return;
    };
    std::fs::write(interrupted.dir.join("interrupt-at"), "7").unwrap();
    let mut c = interrupted.command();
    c.args(["bisect", "start", "--repo"])
        .arg(&interrupted.repo)
        .args(["--good", &interrupted.commits[0], "--bad", "HEAD"])
        .args([
            "--build",
            &format!(
                "git rev-parse HEAD >> {}/builds && cp level built",
                interrupted.dir.display()
            ),
        ])
        .args(["--warmup", "0", "--min-runs", "3", "--max-runs", "3", SPEC]);
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::fs::write(interrupted.dir.join("vernier.pid"), child.id().to_string()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`vernier bisect resume` continues"),
        "{out:?}"
    );
    let before = steps_and_spent(&ok(interrupted.bisect(&["status"]))).1;
    assert!(before < spent, "stopped before the end");
    let resumed = ok(interrupted.bisect(&["resume"]));
    assert!(resumed.contains(&named(&interrupted)), "{resumed}");
    assert_eq!(
        steps_and_spent(&resumed),
        (steps.clone(), spent),
        "{resumed}"
    );
    // The interrupted session is kept, as `interrupted`, and not counted.
    let s = statuses(&interrupted);
    assert_eq!(s.iter().filter(|s| *s == "interrupted").count(), 1, "{s:?}");
    assert_eq!(
        s.iter().filter(|s| *s == "completed").count() as u32,
        spent,
        "{s:?}"
    );
    let builds = interrupted.lines("builds");
    let mut distinct = builds.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        builds.len(),
        distinct.len(),
        "built once across the resume: {builds:?}"
    );

    // Stopped after every step: a fake boot that always brings up the right kernel.
    let Some(booted) = World::new() else {
        return;
    };
    let mut out = ok(booted.start_with_fake_boot());
    let mut boots = 0;
    while !out.contains("first bad commit") {
        assert!(out.contains("waiting for the boot of"), "{out}");
        boots += 1;
        assert!(boots < 40, "{out}");
        booted.boot_pending(None, &format!("boot-{boots}"));
        out = ok(booted.bisect(&["resume"]));
    }
    assert!(out.contains(&named(&booted)), "{out}");
    assert_eq!(steps_and_spent(&out), (steps, spent), "{out}");
    // One boot per visit of a kernel: never more boots than sessions.
    assert!(booted.lines("boots").len() as u32 <= spent);
    let s = statuses(&booted);
    assert_eq!(
        s.iter().filter(|s| *s == "completed").count() as u32,
        spent,
        "{s:?}"
    );

    // reset removes the build cache.
    ok(reference.bisect(&["reset"]));
    assert!(!reference
        .dir
        .join("state/bisect")
        .read_dir()
        .unwrap()
        .any(|_| true));
    assert!(!git(&reference.repo, &["worktree", "list"]).contains("state/bisect/"));
}

#[test]
fn kernel_steps_are_measured_only_on_the_kernel_they_booted() {
    let Some(w) = World::new() else {
        return;
    };
    let mut out = ok(w.start_with_fake_boot());
    let sessions = |w: &World| statuses(w).iter().filter(|s| *s == "completed").count();
    let mut boot_id = 0;
    let mut reboot = |w: &World, release: Option<&str>| {
        boot_id += 1;
        w.boot_pending(release, &format!("boot-{boot_id}"));
    };
    let mut seen = Vec::new();
    let mut scenarios = ["skipped", "wrong", "interrupted", "twice", "failed"]
        .into_iter()
        .peekable();
    let mut round = 0;
    while !out.contains("first bad commit") {
        round += 1;
        assert!(round < 60, "{out}");
        assert!(out.contains("waiting for the boot of"), "{out}");
        let calls = w.lines("boots");
        let last: Vec<String> = calls
            .last()
            .unwrap()
            .split(' ')
            .map(str::to_string)
            .collect();
        // The boot command ran in the commit's built tree, told its commit and release.
        assert!(last[3].ends_with(&format!("trees/{}", last[0])), "{last:?}");
        assert_eq!(last[1], format!("6.18.0-{}", &last[0][..12]));
        let index = w.commits.iter().position(|c| *c == last[0]).unwrap();
        // Each scenario on a first boot of its commit, so that one's failures are not
        // another's; the skip on a commit between the ends (an end is never skipped) away from
        // the first bad commit (skipping it or its neighbour would leave a range).
        let middle =
            index != 0 && index != COMMITS && !(FIRST_BAD - 1..=FIRST_BAD).contains(&index);
        let scenario = match scenarios.peek() {
            Some(&"skipped") if !middle => None,
            Some(_) if last[2] == "1" => scenarios.next(),
            _ => None,
        };
        match scenario {
            Some("wrong") => {
                // A wrong kernel comes up (the old one): a finding, and booted again.
                let before = sessions(&w);
                reboot(&w, Some("6.1.0-host"));
                let r = w.bisect(&["resume"]);
                let said = String::from_utf8_lossy(&r.stderr).into_owned();
                out = ok(r);
                assert!(
                    said.contains("the kernel running is 6.1.0-host, not")
                        && said.contains("it is booted again"),
                    "{said}"
                );
                assert_eq!(sessions(&w), before, "nothing measured on the wrong kernel");
                let again = w.lines("boots");
                assert_eq!(again.len(), calls.len() + 1);
                assert!(again.last().unwrap().starts_with(&format!("{} ", last[0])));
                assert!(again.last().unwrap().contains(" 2 "), "{again:?}");
                let status = ok(w.bisect(&["status"]));
                assert!(status.contains("failed boot 1 of"), "{status}");
            }
            Some("interrupted") => {
                // The boot does not happen: a second resume in the same boot waits and counts
                // nothing; `--boot-again` records it and boots again.
                let before = (sessions(&w), calls.len());
                let r = ok(w.bisect(&["resume"]));
                assert!(r.contains("waiting for the boot of") && r.contains("--boot-again"));
                assert_eq!((sessions(&w), w.lines("boots").len()), before);
                let r = w.bisect(&["resume", "--boot-again"]);
                let said = String::from_utf8_lossy(&r.stderr).into_owned();
                out = ok(r);
                assert!(said.contains("no boot happened"), "{said}");
                assert_eq!(w.lines("boots").len(), before.1 + 1);
            }
            Some("twice") => {
                // Booted right, resumed twice: the second resume measures nothing again.
                reboot(&w, None);
                out = ok(w.bisect(&["resume"]));
                assert!(!out.contains("first bad commit"), "{out}");
                let after = (sessions(&w), w.lines("boots").len());
                let twice = ok(w.bisect(&["resume"]));
                assert!(twice.contains("waiting for the boot of"), "{twice}");
                assert_eq!((sessions(&w), w.lines("boots").len()), after);
            }
            Some("failed") => {
                // The next boot command fails once: recorded, and it runs again at once.
                std::fs::write(w.dir.join("fail-next"), "").unwrap();
                reboot(&w, None);
                let r = w.bisect(&["resume"]);
                let said = String::from_utf8_lossy(&r.stderr).into_owned();
                out = ok(r);
                assert!(said.contains("the boot command failed"), "{said}");
                let calls = w.lines("boots");
                let n = calls.len();
                let commit = |i: usize| calls[i].split(' ').next().unwrap().to_string();
                assert_eq!(commit(n - 1), commit(n - 2));
                assert_ne!(commit(n - 1), last[0]);
            }
            Some("skipped") => {
                // A kernel that comes up wrong twice: the commit is skipped, never measured.
                reboot(&w, Some("6.1.0-host"));
                let r = ok(w.bisect(&["resume"]));
                assert!(r.contains("waiting for the boot of"), "{r}");
                reboot(&w, Some("6.1.0-host"));
                let r = w.bisect(&["resume"]);
                let said = String::from_utf8_lossy(&r.stderr).into_owned();
                out = ok(r);
                assert!(said.contains("the commit is skipped"), "{said}");
                let report = ok(w.bisect(&["status"]));
                assert!(
                    report.contains(&format!(
                        "kernels that did not come up (skipped): {}",
                        &last[0][..12]
                    )),
                    "{report}"
                );
                assert!(!report.contains(&format!("next: a session at {}", &last[0][..12])));
            }
            _ => {
                reboot(&w, None);
                out = ok(w.bisect(&["resume"]));
                continue;
            }
        }
        seen.extend(scenario);
    }
    assert_eq!(
        seen,
        ["skipped", "wrong", "interrupted", "twice", "failed"],
        "{out}"
    );
    // The skipped commit aside, the bisection names the first bad one.
    assert!(
        out.contains(&format!(
            "first bad commit: {} (commit {FIRST_BAD})",
            w.commits[FIRST_BAD]
        )),
        "{out}"
    );
    // Every run ran on the kernel of the commit it measured.
    let measured = w.lines("measured");
    assert!(!measured.is_empty());
    for line in &measured {
        let (release, commit) = line.split_once(' ').unwrap();
        assert_eq!(release, format!("6.18.0-{commit}"), "{measured:?}");
    }
    // The sessions are counted once, whatever the failures and resumes.
    let (_, spent) = steps_and_spent(&out);
    assert_eq!(sessions(&w) as u32, spent);
}

/// A virtual machine's boot command: it "boots" the kernel (the release and a new boot id) and
/// runs `bisect resume --this-boot` in it, which measures that kernel's steps and returns; the
/// `start` that ran it goes on with the next build, to the end, in one call.
#[test]
fn a_virtual_machine_measures_its_kernel_and_returns() {
    let Some(w) = World::new() else {
        return;
    };
    let d = w.dir.display();
    executable(
        &w.dir.join("vm"),
        &format!(
            "#!/bin/sh\nset -e\n\
             n=$(cat {d}/vm-boots 2>/dev/null || echo 0); echo $((n + 1)) > {d}/vm-boots\n\
             echo \"$VERNIER_BISECT_RELEASE\" > {d}/kernel/proc/sys/kernel/osrelease\n\
             echo vm-$n > {d}/kernel/proc/sys/kernel/random/boot_id\n\
             {exe} --db {db} bisect resume --this-boot\n",
            exe = env!("CARGO_BIN_EXE_vernier"),
            db = w.db.display(),
        ),
    );
    let out = ok(w.start(&[
        "--boot",
        &format!("{d}/vm"),
        "--kernel-release",
        KERNEL_RELEASE,
    ]));
    assert!(
        out.contains(&format!(
            "first bad commit: {} (commit {FIRST_BAD})",
            w.commits[FIRST_BAD]
        )),
        "{out}"
    );
    let measured = w.lines("measured");
    assert!(!measured.is_empty());
    for line in &measured {
        let (release, commit) = line.split_once(' ').unwrap();
        assert_eq!(release, format!("6.18.0-{commit}"), "{measured:?}");
    }
    let (_, spent) = steps_and_spent(&out);
    let boots: u32 = std::fs::read_to_string(w.dir.join("vm-boots"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        boots >= 3 && boots <= spent,
        "{boots} boots, {spent} sessions"
    );
    assert!(!out.contains("failed boot"), "{out}");
}
