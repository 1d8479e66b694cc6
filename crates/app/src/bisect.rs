//! `vernier bisect`: which commit of a range made a configuration slower (docs/bisect.md).
//!
//! A bisection is a stored [`Bisection`] (the range of commits, the build command, the specs,
//! the budget) and ordinary sessions tagged `bisect=ID` and `commit=SHA`. Its state is not
//! kept anywhere else: [`state`] loads the sessions and replays the decision rule
//! (`vernier_analysis::bisect::plan`), so a bisection interrupted, or resumed after a reboot,
//! continues where the measurements stand. [`resume`] runs the steps: it checks the commit out
//! in a work tree of its own (`git worktree add` under vernier's state directory; the user's
//! checkout is never touched), builds it (a failed build is skipped, as `git bisect skip`),
//! runs a session in that directory through [`run_session`] and asks the rule again, until it
//! names the first bad commit or the budget is spent. Every process it starts (git, the build)
//! runs in a process group of its own ([`Group`]), killed if vernier leaves first.
//!
//! Each commit is built once, in a work tree of its own ([`build`], the build cache): a step
//! that returns to a commit, or a resume, finds it built.
//!
//! With `--boot` (kernels) a step is a small state machine kept in the stored bisection
//! ([`KernelBoot`]): build, store what the boot must bring up (the commit, the release its build
//! reports, the boot id before), run the boot command, and measure only once a `bisect resume`
//! finds that kernel running in a new boot ([`kernel_step`]). A wrong kernel, a boot that did
//! not happen or a boot command that failed is recorded and the commit booted again, and
//! skipped after [`BOOT_ATTEMPTS`] such boots; it is never measured as that commit.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use uuid::Uuid;
// The state is plain data, which the site shows too.
use vernier_analysis::bisect::{commit_levels, plan, BisectSettings, Measurements, Outcome};
pub use vernier_analysis::bisect::{BisectState, CommitSessions};
use vernier_model::bisect::{BISECT_TAG, COMMIT_TAG};
use vernier_model::{
    BisectTerms, Bisection, BootFailure, KernelBoot, SessionStatus, SettingsLayer, BOOT_ATTEMPTS,
    CONFIDENCE_LEVEL,
};
use vernier_store::{Access, Load, Location, Store};
use vernier_sys::kernel::{read_running_kernel, RunningKernel};
use vernier_sys::process::Group;
use vernier_sys::Roots;

use crate::request::SessionRequest;
use crate::session::{run_session, Ending, Observer, SessionEnd};
use crate::signals::{OnSignal, Signals};
use crate::{database, AppError};

/// What `vernier bisect start` asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct StartRequest {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    pub terms: BisectTerms,
}

/// What [`resume`] tells as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum BisectNotice {
    /// Building commit `commit` (position `index`).
    Building { index: usize, commit: String },
    /// Its build failed: skipped. The build's output is in `log`.
    BuildFailed {
        index: usize,
        commit: String,
        log: PathBuf,
    },
    /// Measuring a session at the commit.
    Measuring {
        index: usize,
        commit: String,
        sessions: usize,
    },
    /// Running the boot command for the commit's kernel, which must come up as `release`.
    Booting {
        index: usize,
        commit: String,
        release: String,
        attempt: usize,
        log: PathBuf,
    },
    /// The kernel running is the commit's: its steps are measured.
    KernelChecked {
        index: usize,
        commit: String,
        release: String,
    },
    /// A boot of the commit's kernel failed: booted again, or skipped after [`BOOT_ATTEMPTS`].
    BootFailed {
        index: usize,
        failure: BootFailure,
        skipped: bool,
    },
}

/// How [`resume`] runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResumeOptions {
    /// Measure only while the kernel running is the one the step booted; build and boot
    /// nothing (the resume that a boot command runs inside a virtual machine).
    pub this_boot: bool,
    /// A boot that was asked for has not happened (the boot id is unchanged): count it as
    /// failed and run the boot command again. Without it such a resume waits.
    pub boot_again: bool,
}

/// How [`resume`] ended.
#[derive(Debug)]
pub enum BisectEnd {
    /// The rule has nothing more to measure: its outcome is in the state.
    Finished(Box<BisectState>),
    /// A signal ended a session or the wait: `bisect resume` continues.
    Interrupted { signal: Option<i32> },
    /// The boot command returned and the kernel it boots is not running yet (a reboot or a
    /// kexec under way): the resume after the boot continues.
    AwaitingBoot {
        index: usize,
        commit: String,
        release: String,
    },
    /// With [`ResumeOptions::this_boot`]: the next step needs another commit's kernel.
    OtherKernel { index: usize, commit: String },
}

fn bisect_error(message: impl Into<String>) -> AppError {
    AppError::Bisect(message.into())
}

/// Where a bisection's work tree and build logs live: `$XDG_STATE_HOME/vernier/bisect/ID`
/// (`VERNIER_STATE_DIR` replaces `$XDG_STATE_HOME/vernier`).
pub fn state_dir(id: Uuid) -> Result<PathBuf, AppError> {
    let base = match std::env::var_os("VERNIER_STATE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => dirs::state_dir()
            .or_else(dirs::data_dir)
            .ok_or_else(|| {
                bisect_error(
                    "cannot find the state directory (set HOME, XDG_STATE_HOME or \
                     VERNIER_STATE_DIR)",
                )
            })?
            .join("vernier"),
    };
    Ok(base.join("bisect").join(id.to_string()))
}

/// Runs `command` in a process group of its own with its output to `output` (or captured),
/// and returns its exit status and captured standard output.
fn run_command(command: &mut Command, output: Option<&Path>) -> Result<(bool, String), AppError> {
    let what = format!("{command:?}");
    let failed = |e: std::io::Error| bisect_error(format!("cannot run {what}: {e}"));
    command.stdin(Stdio::null());
    match output {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(failed)?;
            let copy = file.try_clone().map_err(failed)?;
            command.stdout(file).stderr(copy);
        }
        None => {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
    }
    let mut group = Group::new();
    let mut spawned = group.spawn(command).map_err(failed)?;
    let mut text = String::new();
    let mut errors = String::new();
    if let Some(mut out) = spawned.stdout.take() {
        out.read_to_string(&mut text).map_err(failed)?;
    }
    if let Some(mut err) = spawned.stderr.take() {
        err.read_to_string(&mut errors).map_err(failed)?;
    }
    let exit = group.wait(spawned.pid)?;
    if output.is_none() && !exit.success() {
        return Err(bisect_error(format!(
            "{what} failed: {}",
            errors.lines().next().unwrap_or("no message")
        )));
    }
    Ok((exit.success(), text))
}

/// `git -C repo ARGS`, its standard output; an error names the command and git's message.
fn git(repo: &Path, args: &[&str]) -> Result<String, AppError> {
    let mut command = Command::new("git");
    command.arg("-C").arg(repo).args(args);
    Ok(run_command(&mut command, None)?.1)
}

/// The commit a revision names in `repo`.
fn resolve(repo: &Path, revision: &str) -> Result<String, AppError> {
    let spec = format!("{revision}^{{commit}}");
    git(repo, &["rev-parse", "--verify", "--quiet", &spec])
        .map(|s| s.trim().to_string())
        .map_err(|_| {
            bisect_error(format!(
                "'{revision}' names no commit in {}",
                repo.display()
            ))
        })
}

/// Checks a start request, lists its range and stores the bisection; nothing is measured yet.
pub fn start(request: &StartRequest, location: &Location) -> Result<Bisection, AppError> {
    if request.terms.specs.is_empty() {
        return Err(bisect_error(
            "give what to measure: one SPEC, as for `vernier run`",
        ));
    }
    if request.terms.specs.len() > 1 {
        return Err(bisect_error(format!(
            "a bisection follows one configuration; got {} specs",
            request.terms.specs.len()
        )));
    }
    if let Some(t) = request.terms.threshold {
        if !(t > 0.0 && t < 1.0) {
            return Err(bisect_error(format!(
                "--threshold must be a fraction in (0, 1) such as 0.05, got {t}"
            )));
        }
    }
    if request.terms.budget_sessions < 3 {
        return Err(bisect_error(format!(
            "--budget {} sessions is too few: the ends need 2 sessions each",
            request.terms.budget_sessions
        )));
    }
    if request.terms.kernel_release.is_some() && request.terms.boot.is_none() {
        return Err(bisect_error(
            "--kernel-release says what a booted kernel reports: it goes with --boot",
        ));
    }
    if request.terms.boot.is_some() {
        // A bisection of kernels must be able to check the kernel it booted.
        running_kernel()?;
    }
    let repo = std::fs::canonicalize(&request.repo)
        .map_err(|e| bisect_error(format!("--repo {}: {e}", request.repo.display())))?;
    let good = resolve(&repo, &request.good)?;
    let bad = resolve(&repo, &request.bad)?;
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(&repo)
        .args(["merge-base", "--is-ancestor", &good, &bad]);
    if good == bad || !run_command(&mut command, Some(Path::new("/dev/null")))?.0 {
        return Err(bisect_error(format!(
            "--good {} must be an ancestor of --bad {}",
            request.good, request.bad
        )));
    }
    let range = format!("{good}..{bad}");
    let listed = git(&repo, &["rev-list", "--first-parent", "--reverse", &range])?;
    let mut commits = vec![good];
    commits.extend(listed.lines().map(str::to_string));
    let mut store = database::open(location, Access::Create)?;
    if let Some(other) = store.bisections()?.first() {
        return Err(bisect_error(format!(
            "bisection {} is in progress: `vernier bisect reset` ends it first",
            other.id
        )));
    }
    let bisection = Bisection {
        id: Uuid::new_v4(),
        created_at_ns: vernier_sys::clock::unix_now_ns(),
        repo: repo.to_string_lossy().into_owned(),
        commits,
        terms: request.terms.clone(),
        unbuildable: Vec::new(),
        build_s: 0.0,
        kernel_boot: None,
        boot_failures: Vec::new(),
    };
    store.put_bisection(&bisection)?;
    Ok(bisection)
}

/// The bisection in progress.
pub fn current(store: &dyn Store) -> Result<Bisection, AppError> {
    store
        .bisections()?
        .pop()
        .ok_or_else(|| bisect_error("no bisection in progress: `vernier bisect start` begins one"))
}

/// The settings of the decision rule for `b`, with the sessions its time budget leaves.
fn settings(b: &Bisection, spent: usize, session_s: f64, higher_is_better: bool) -> BisectSettings {
    let mut budget = b.terms.budget_sessions as usize;
    if let Some(limit) = b.terms.budget_s {
        if session_s + b.build_s >= limit {
            budget = budget.min(spent);
        }
    }
    BisectSettings {
        threshold: b.terms.threshold,
        level: CONFIDENCE_LEVEL,
        higher_is_better,
        end_sessions: 2,
        commit_sessions: b.terms.commit_sessions as usize,
        budget_sessions: budget,
    }
}

/// The bisection's state from its stored sessions ([`BisectState`]).
pub fn state(store: &dyn Store, bisection: Bisection) -> Result<BisectState, AppError> {
    let index: BTreeMap<&str, usize> = bisection
        .commits
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let tag = [(BISECT_TAG.to_string(), bisection.id.to_string())];
    let mut m = Measurements::new(bisection.commits.len());
    for c in bisection
        .unbuildable
        .iter()
        .map(String::as_str)
        .chain(bisection.unbootable())
    {
        if let Some(&i) = index.get(c) {
            m.unbuildable.insert(i);
        }
    }
    let mut measured: BTreeMap<usize, CommitSessions> = BTreeMap::new();
    let (mut configuration, mut unit, mut higher_is_better) = (None, None, false);
    let mut session_s = 0.0;
    let mut fingerprints = Vec::new();
    for id in store.find_sessions_by_tags(&tag)? {
        let session = store
            .load_session(id, Load::MEASUREMENTS)
            .map_err(|source| AppError::LoadSession { id, source })?;
        if let Some(end) = session.info.ended_at_ns {
            session_s += (end - session.info.started_at_ns) as f64 / 1e9;
        }
        let Some(&i) = session
            .info
            .tags
            .get(COMMIT_TAG)
            .and_then(|c| index.get(c.as_str()))
        else {
            continue;
        };
        let Some(config) = session.configurations.first() else {
            continue;
        };
        let (values, metric) = match &bisection.terms.metric {
            None => (config.values(), &config.record.metric),
            Some(name) => {
                let Some(info) = config
                    .record
                    .secondary_metrics
                    .iter()
                    .chain([&config.record.metric])
                    .find(|m| &m.name == name)
                else {
                    return Err(bisect_error(format!(
                        "--metric {name}: {} records {}",
                        config.record.benchmark,
                        std::iter::once(&config.record.metric)
                            .chain(&config.record.secondary_metrics)
                            .map(|m| m.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                };
                (config.metric_values(name), info)
            }
        };
        // Only whole sessions count: one interrupted (a signal, a reboot during it) is
        // measured again by the resume, not counted twice or with part of its runs.
        if values.is_empty() || session.info.status != SessionStatus::Completed {
            continue;
        }
        m.add_session(i, &values)?;
        configuration.get_or_insert_with(|| {
            vernier_model::ConfigKey::new(&config.record.benchmark, &config.record.options)
                .to_string()
        });
        unit.get_or_insert_with(|| metric.unit.clone());
        higher_is_better = metric.higher_is_better;
        if !fingerprints.contains(&session.info.fingerprint) {
            fingerprints.push(session.info.fingerprint.clone());
        }
        let entry = measured.entry(i).or_insert_with(|| CommitSessions {
            index: i,
            commit: bisection.commits[i].clone(),
            sessions: Vec::new(),
            medians: Vec::new(),
        });
        entry.sessions.push(id);
        entry
            .medians
            .push(vernier_stats_median(&values).unwrap_or(f64::NAN));
    }
    // The calibrations of the machine for this configuration, if any.
    let calibrations: Vec<_> = match measured.values().next() {
        Some(_) => {
            let first = store.find_sessions_by_tags(&tag)?;
            let session = match first.first() {
                Some(id) => Some(store.load_session(*id, Load::INFO)?),
                None => None,
            };
            let all = store.calibrations(&fingerprints)?;
            match session.as_ref().and_then(|s| s.configurations.first()) {
                Some(c) => all
                    .into_iter()
                    .filter(|k| {
                        k.benchmark == c.record.benchmark
                            && k.options == c.record.options
                            && k.metric
                                == *bisection
                                    .terms
                                    .metric
                                    .as_ref()
                                    .unwrap_or(&c.record.metric.name)
                    })
                    .collect(),
                None => Vec::new(),
            }
        }
        None => Vec::new(),
    };
    let s = settings(&bisection, m.spent(), session_s, higher_is_better);
    let plan = plan(&m, &calibrations, &s)?;
    let levels = match &plan.noise {
        Some(noise) => commit_levels(&m, noise, CONFIDENCE_LEVEL)?,
        None => Vec::new(),
    };
    Ok(BisectState {
        bisection,
        plan,
        measured: measured.into_values().collect(),
        levels,
        configuration,
        unit,
        higher_is_better,
        session_s,
    })
}

fn vernier_stats_median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The work tree of `commit` in the build cache: `trees/SHA` under [`state_dir`].
fn tree_of(b: &Bisection, commit: &str) -> Result<PathBuf, AppError> {
    Ok(state_dir(b.id)?.join("trees").join(commit))
}

/// The file that says `commit` was built in its tree (written after its build succeeded).
fn built_marker(b: &Bisection, commit: &str) -> Result<PathBuf, AppError> {
    Ok(state_dir(b.id)?.join("builds").join(commit))
}

fn write_marker(path: &Path, text: &str) -> Result<(), AppError> {
    vernier_sys::write_file_atomic(path, text.as_bytes())
        .map_err(|e| bisect_error(format!("cannot write {}: {e}", path.display())))
}

/// The build cache of a bisection: the commits built, and the bytes their work trees take.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildCache {
    pub dir: PathBuf,
    pub commits: usize,
    pub bytes: u64,
}

/// What the build cache of `b` holds now.
pub fn build_cache(b: &Bisection) -> Result<BuildCache, AppError> {
    let dir = state_dir(b.id)?;
    let commits = b
        .commits
        .iter()
        .filter(|c| built_marker(b, c).is_ok_and(|m| m.exists()))
        .count();
    Ok(BuildCache {
        bytes: disk_bytes(&dir.join("trees")),
        dir,
        commits,
    })
}

/// The bytes of the regular files under `dir` (symbolic links not followed).
fn disk_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// Builds commit `index` in its own work tree, unless the cache holds it built already;
/// whether it is built. A commit whose build failed is recorded as unbuildable (skipped).
fn build(
    b: &mut Bisection,
    index: usize,
    store: &mut dyn Store,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<bool, AppError> {
    let commit = b.commits[index].clone();
    let dir = state_dir(b.id)?;
    let tree = tree_of(b, &commit)?;
    let marker = built_marker(b, &commit)?;
    if marker.exists() && tree.join(".git").exists() {
        return Ok(true);
    }
    let _ = std::fs::remove_file(&marker);
    if tree.join(".git").exists() {
        // A build interrupted earlier: start again from a clean checkout.
        git(
            &tree,
            &["checkout", "--quiet", "--detach", "--force", &commit],
        )?;
        git(&tree, &["clean", "-fdxq"])?;
    } else {
        std::fs::create_dir_all(dir.join("trees"))
            .map_err(|e| bisect_error(format!("cannot create {}: {e}", dir.display())))?;
        let path = tree.to_string_lossy().into_owned();
        git(
            Path::new(&b.repo),
            &["worktree", "add", "--detach", "--force", &path, &commit],
        )?;
    }
    let Some(build) = b.terms.build.clone() else {
        write_marker(&marker, "built")?;
        return Ok(true);
    };
    notice(BisectNotice::Building {
        index,
        commit: commit.clone(),
    });
    let log = dir.join(format!("build-{commit}.log"));
    let started = std::time::Instant::now();
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(&build).current_dir(&tree);
    let (ok, _) = run_command(&mut command, Some(&log))?;
    b.build_s += started.elapsed().as_secs_f64();
    if ok {
        write_marker(&marker, "built")?;
    } else {
        b.unbuildable.push(commit.clone());
        notice(BisectNotice::BuildFailed { index, commit, log });
    }
    store.put_bisection(b)?;
    Ok(ok)
}

/// Where the running kernel is read: the machine's /proc, or for tests the tree that
/// `VERNIER_TEST_KERNEL_ROOT` names (its `proc/sys/kernel/osrelease` and
/// `proc/sys/kernel/random/boot_id`), which a fake boot command rewrites.
fn kernel_roots() -> Roots {
    match std::env::var_os("VERNIER_TEST_KERNEL_ROOT") {
        Some(dir) => Roots::under(PathBuf::from(dir)),
        None => Roots::real(),
    }
}

fn running_kernel() -> Result<RunningKernel, AppError> {
    read_running_kernel(&kernel_roots()).map_err(|e| {
        bisect_error(format!(
            "cannot tell which kernel runs ({e}): a step of a kernel is measured only once \
             its release and boot are known"
        ))
    })
}

/// What a step of a bisection with `--boot` does next ([`kernel_step`]).
#[derive(Debug, Clone, PartialEq)]
enum KernelStep {
    /// The commit's kernel runs: measure.
    Measure,
    /// A boot failed and is recorded: plan again.
    Again,
    /// The boot command returned, the boot has not happened yet.
    Await { release: String },
    /// Build and boot the commit's kernel.
    Boot,
}

/// Records a failed boot of the kernel `kb` was for, and forgets the boot.
fn boot_failed(
    b: &mut Bisection,
    kb: &KernelBoot,
    finding: String,
    store: &mut dyn Store,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<(), AppError> {
    let failure = BootFailure {
        commit: kb.commit.clone(),
        attempt: kb.attempt,
        finding,
    };
    b.boot_failures.push(failure.clone());
    b.kernel_boot = None;
    store.put_bisection(b)?;
    let index = b.commits.iter().position(|c| *c == kb.commit).unwrap_or(0);
    let end = index == 0 || index + 1 == b.commits.len();
    notice(BisectNotice::BootFailed {
        index,
        skipped: !end && b.boot_failures_of(&kb.commit) >= BOOT_ATTEMPTS,
        failure,
    });
    Ok(())
}

/// The state machine of a kernel's step: whether the kernel that commit `index` needs runs,
/// checking a boot that was pending (the boot id must have changed and the release be the
/// one its build reported; otherwise the boot failed). `just_booted`: this process ran the
/// boot command, which returned; `boot_again`: a boot that has not happened is taken as
/// interrupted (failed) rather than waited for.
fn kernel_step(
    b: &mut Bisection,
    index: usize,
    just_booted: bool,
    boot_again: bool,
    store: &mut dyn Store,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<KernelStep, AppError> {
    let now = running_kernel()?;
    if let Some(kb) = b.kernel_boot.clone() {
        if kb.booted.is_none() {
            if now.boot_id == kb.boot_id_before {
                if just_booted || !boot_again {
                    // A reboot or kexec returns before the machine goes down; a second resume
                    // before the boot (by hand) waits for it too, and counts nothing.
                    return Ok(KernelStep::Await {
                        release: kb.release,
                    });
                }
                let finding = format!(
                    "no boot happened after the boot command (the boot id is still {}): the \
                     boot was interrupted",
                    now.boot_id
                );
                boot_failed(b, &kb, finding, store, notice)?;
                return Ok(KernelStep::Again);
            }
            if now.release != kb.release {
                let finding = format!(
                    "the kernel running is {}, not {} of commit {}: not measured",
                    now.release, kb.release, kb.commit
                );
                boot_failed(b, &kb, finding, store, notice)?;
                return Ok(KernelStep::Again);
            }
            b.kernel_boot = Some(KernelBoot {
                booted: Some(now.boot_id.clone()),
                ..kb.clone()
            });
            store.put_bisection(b)?;
            notice(BisectNotice::KernelChecked {
                index: b.commits.iter().position(|c| *c == kb.commit).unwrap_or(0),
                commit: kb.commit.clone(),
                release: kb.release.clone(),
            });
        }
    }
    let running_here = b.kernel_boot.as_ref().is_some_and(|kb| {
        kb.commit == b.commits[index]
            && kb.booted.as_deref() == Some(now.boot_id.as_str())
            && kb.release == now.release
    });
    Ok(if running_here {
        KernelStep::Measure
    } else {
        KernelStep::Boot
    })
}

/// The release that commit `index`'s built kernel reports: `--kernel-release` (default `make
/// -s kernelrelease`) in its tree, its first line.
fn expected_release(b: &Bisection, tree: &Path) -> Result<String, AppError> {
    let command_text = b
        .terms
        .kernel_release
        .clone()
        .unwrap_or_else(|| "make -s kernelrelease".to_string());
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(&command_text).current_dir(tree);
    let text = run_command(&mut command, None)
        .map_err(|e| bisect_error(format!("--kernel-release '{command_text}': {e}")))?
        .1;
    let release = text.lines().next().unwrap_or("").trim().to_string();
    if release.is_empty() {
        return Err(bisect_error(format!(
            "--kernel-release '{command_text}' printed no release in {}",
            tree.display()
        )));
    }
    Ok(release)
}

/// Runs the boot command for commit `index` (built): the boot is stored first, so that the
/// resume after it knows what to find. The command gets the commit and its tree in its
/// environment: `VERNIER_BISECT_ID`, `VERNIER_BISECT_COMMIT`, `VERNIER_BISECT_TREE`,
/// `VERNIER_BISECT_RELEASE`, `VERNIER_BISECT_ATTEMPT`.
fn boot(
    b: &mut Bisection,
    index: usize,
    store: &mut dyn Store,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<(), AppError> {
    let Some(command_text) = b.terms.boot.clone() else {
        return Ok(());
    };
    let commit = b.commits[index].clone();
    let tree = tree_of(b, &commit)?;
    let release = expected_release(b, &tree)?;
    let now = running_kernel()?;
    let kb = KernelBoot {
        commit: commit.clone(),
        release: release.clone(),
        boot_id_before: now.boot_id,
        booted: None,
        attempt: b.boot_failures_of(&commit) + 1,
    };
    b.kernel_boot = Some(kb.clone());
    store.put_bisection(b)?;
    let log = state_dir(b.id)?.join(format!("boot-{commit}-{}.log", kb.attempt));
    notice(BisectNotice::Booting {
        index,
        commit: commit.clone(),
        release,
        attempt: kb.attempt,
        log: log.clone(),
    });
    let started = std::time::Instant::now();
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(&command_text)
        .current_dir(&tree)
        .env("VERNIER_BISECT_ID", b.id.to_string())
        .env("VERNIER_BISECT_COMMIT", &commit)
        .env("VERNIER_BISECT_TREE", &tree)
        .env("VERNIER_BISECT_RELEASE", &kb.release)
        .env("VERNIER_BISECT_ATTEMPT", kb.attempt.to_string());
    let (ok, _) = run_command(&mut command, Some(&log))?;
    // The command may have run a resume of its own (a virtual machine's): read what it left.
    *b = current(store)?;
    b.build_s += started.elapsed().as_secs_f64();
    store.put_bisection(b)?;
    if !ok && b.kernel_boot.as_ref() == Some(&kb) {
        let finding = format!(
            "the boot command failed (its output is in {})",
            log.display()
        );
        boot_failed(b, &kb, finding, store, notice)?;
    }
    Ok(())
}

/// The session of one step: the bisection's specs and settings, tagged with it and the commit.
fn step_request(b: &Bisection, commit: &str) -> SessionRequest {
    SessionRequest {
        specs: b.terms.specs.clone(),
        settings: b.terms.limits.layer(),
        tags: vec![
            (BISECT_TAG.to_string(), b.id.to_string()),
            (COMMIT_TAG.to_string(), commit.to_string()),
        ],
        on_signal: OnSignal::Interrupt,
        ..SessionRequest::default()
    }
}

/// The right to run a bisection's steps, held by one `resume` (or `start`) at a time: the
/// after-boot unit and a resume by hand would otherwise measure the same step twice and spend
/// the budget twice. An advisory lock (flock(2)) on `steps.lock` in the bisection's state
/// directory, released by the kernel when the process ends in any way, kill -9 included.
struct StepsLock {
    _file: std::fs::File,
}

impl StepsLock {
    fn take(id: Uuid) -> Result<Self, AppError> {
        Self::take_in(&state_dir(id)?, id)
    }

    fn take_in(dir: &Path, id: Uuid) -> Result<Self, AppError> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(dir)
            .map_err(|e| bisect_error(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join("steps.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| bisect_error(format!("cannot open {}: {e}", path.display())))?;
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(bisect_error(
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    format!(
                        "another `vernier bisect resume` (or `start`) is running the steps of \
                     bisection {id} (it holds {}); a step is measured by one at a time",
                        path.display()
                    )
                } else {
                    format!("cannot lock {}: {e}", path.display())
                },
            ));
        }
        Ok(StepsLock { _file: file })
    }
}

/// A database location that stays right when the working directory changes.
fn absolute(location: &Location) -> Location {
    match location {
        Location::File(path) if path.is_relative() => std::env::current_dir()
            .map(|d| Location::File(d.join(path)))
            .unwrap_or_else(|_| location.clone()),
        other => other.clone(),
    }
}

/// Runs the bisection's steps until the rule has nothing more to measure or a signal comes
/// (with `--boot`, also until a boot is under way).
pub fn resume(
    location: &Location,
    options: ResumeOptions,
    signals: &mut Signals,
    observer: &mut dyn Observer,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<BisectEnd, AppError> {
    let location = absolute(location);
    let mut store = database::open(&location, Access::Write)?;
    // The resume that a boot command runs inside a virtual machine is run by the one that
    // holds the lock (and may share its file system): it takes none.
    let _steps = if options.this_boot {
        None
    } else {
        Some(StepsLock::take(current(store.as_ref())?.id)?)
    };
    let mut just_booted = false;
    loop {
        let mut b = current(store.as_ref())?;
        let st = state(store.as_ref(), b.clone())?;
        let Outcome::Measure { index } = st.plan.outcome else {
            return Ok(BisectEnd::Finished(Box::new(st)));
        };
        if signals.interrupt().signal().is_some() {
            return Ok(BisectEnd::Interrupted {
                signal: signals.interrupt().signal(),
            });
        }
        let commit = b.commits[index].clone();
        if b.terms.boot.is_some() {
            let step = kernel_step(
                &mut b,
                index,
                just_booted,
                options.boot_again,
                store.as_mut(),
                notice,
            )?;
            match step {
                KernelStep::Measure => {}
                KernelStep::Again => {
                    just_booted = false;
                    continue;
                }
                KernelStep::Await { release } => {
                    return Ok(BisectEnd::AwaitingBoot {
                        index,
                        commit,
                        release,
                    })
                }
                KernelStep::Boot if options.this_boot => {
                    return Ok(BisectEnd::OtherKernel { index, commit })
                }
                KernelStep::Boot => {
                    // An end cannot be skipped: without its kernel there is nothing to bisect.
                    let end = index == 0 || index + 1 == b.commits.len();
                    if end && b.boot_failures_of(&commit) >= BOOT_ATTEMPTS && !options.boot_again {
                        let last = b.boot_failures.iter().rfind(|f| f.commit == commit);
                        return Err(bisect_error(format!(
                            "the kernel of the {} end {commit} failed to come up {} times (last: \
                             {}): make its boot work, then `vernier bisect resume --boot-again`",
                            if index == 0 { "good" } else { "bad" },
                            b.boot_failures_of(&commit),
                            last.map_or("", |f| f.finding.as_str())
                        )));
                    }
                    if build(&mut b, index, store.as_mut(), notice)? {
                        boot(&mut b, index, store.as_mut(), notice)?;
                        just_booted = true;
                    }
                    continue;
                }
            }
        } else if !build(&mut b, index, store.as_mut(), notice)? {
            continue;
        }
        let tree = tree_of(&b, &commit)?;
        if !tree.is_dir() {
            return Err(bisect_error(format!(
                "the work tree of commit {commit} is not at {}: a resume inside a virtual \
                 machine needs the host's state directory (VERNIER_STATE_DIR)",
                tree.display()
            )));
        }
        notice(BisectNotice::Measuring {
            index,
            commit: commit.clone(),
            sessions: st
                .measured
                .iter()
                .find(|c| c.index == index)
                .map_or(0, |c| c.sessions.len()),
        });
        let request = step_request(&b, &commit);
        let here = std::env::current_dir()
            .map_err(|e| bisect_error(format!("cannot read the working directory: {e}")))?;
        std::env::set_current_dir(&tree)
            .map_err(|e| bisect_error(format!("cannot enter {}: {e}", tree.display())))?;
        let end = run_session(&request, &location, signals, observer);
        std::env::set_current_dir(&here)
            .map_err(|e| bisect_error(format!("cannot return to {}: {e}", here.display())))?;
        match end? {
            SessionEnd::Ran(ran) => match ran.ending {
                Ending::Completed | Ending::Ended => {}
                Ending::Interrupted { signal } => return Ok(BisectEnd::Interrupted { signal }),
                Ending::TimedOut { limit_s } => {
                    return Err(bisect_error(format!(
                        "the session at commit {commit} ran past its time limit of {limit_s:.0} s"
                    )));
                }
                Ending::Failed { failures } => {
                    let list: Vec<String> = failures
                        .iter()
                        .map(|(label, error)| format!("{label}: {error}"))
                        .collect();
                    return Err(bisect_error(format!(
                        "the session at commit {commit} failed: {}",
                        list.join("; ")
                    )));
                }
            },
            SessionEnd::NotStarted { signal } => return Ok(BisectEnd::Interrupted { signal }),
            SessionEnd::Skipped { reason, .. } => {
                return Err(bisect_error(format!(
                    "the session at commit {commit} was skipped: {reason}"
                )))
            }
        }
    }
}

/// Ends the bisection in progress: its work trees (the build cache) and state directory are
/// removed, its record deleted; its sessions stay.
pub fn reset(location: &Location) -> Result<Bisection, AppError> {
    let mut store = database::open(location, Access::Write)?;
    let b = current(store.as_ref())?;
    let dir = state_dir(b.id)?;
    for commit in &b.commits {
        let tree = tree_of(&b, commit)?;
        if tree.exists() {
            let path = tree.to_string_lossy().into_owned();
            // The repository may be gone; the directory is removed below either way.
            let _ = git(
                Path::new(&b.repo),
                &["worktree", "remove", "--force", &path],
            );
        }
    }
    let _ = git(Path::new(&b.repo), &["worktree", "prune"]);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| bisect_error(format!("cannot remove {}: {e}", dir.display())))?;
    }
    store.delete_bisection(b.id)?;
    Ok(b)
}

/// What `vernier bisect judge` asks for: one session of the current directory, judged against
/// the sessions of the good and the bad end.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRequest {
    pub specs: Vec<String>,
    /// Selectors of the ends' sessions (`commit=SHA`, `kernel=A`, ids).
    pub good: String,
    pub bad: String,
    /// The metric followed; none: the primary one.
    pub metric: Option<String>,
    pub threshold: Option<f64>,
    pub settings: SettingsLayer,
    pub tags: Vec<(String, String)>,
    /// Most sessions of the current directory: more while the call is undecided.
    pub sessions: u32,
}

/// How `bisect judge` ended: the call (git bisect's exit status) and its interval.
#[derive(Debug)]
pub enum JudgeEnd {
    Judged {
        session: Uuid,
        step: Option<vernier_analysis::bisect::Step>,
        call: vernier_analysis::bisect::Call,
        higher_is_better: bool,
    },
    Interrupted {
        signal: Option<i32>,
    },
}

/// The values of `metric` (none: the primary one) of a stored configuration.
fn metric_values(c: &vernier_model::StoredConfiguration, metric: Option<&str>) -> Vec<f64> {
    match metric {
        Some(name) => c.metric_values(name),
        None => c.values(),
    }
}

/// Runs sessions of the current directory (at most `request.sessions`, more while undecided)
/// and judges them against the ends' sessions with the decision rule.
pub fn judge(
    request: &JudgeRequest,
    location: &Location,
    signals: &mut Signals,
    observer: &mut dyn Observer,
) -> Result<JudgeEnd, AppError> {
    use vernier_analysis::bisect::Call;
    let store = database::open(location, Access::Create)?;
    let ends = |selector: &str| -> Result<Vec<Vec<f64>>, AppError> {
        let ids = store.select(selector)?;
        let mut out = Vec::new();
        for id in ids {
            let s = store
                .load_session(id, Load::MEASUREMENTS)
                .map_err(|source| AppError::LoadSession { id, source })?;
            if let Some(c) = s.configurations.first() {
                let v = metric_values(c, request.metric.as_deref());
                if !v.is_empty() {
                    out.push(v);
                }
            }
        }
        Ok(out)
    };
    let (good, bad) = (ends(&request.good)?, ends(&request.bad)?);
    if good.is_empty() || bad.is_empty() {
        return Err(bisect_error(format!(
            "the ends need measured sessions: --good {} has {}, --bad {} has {}",
            request.good,
            good.len(),
            request.bad,
            bad.len()
        )));
    }
    drop(store);
    let session = SessionRequest {
        specs: request.specs.clone(),
        settings: request.settings.clone(),
        tags: request.tags.clone(),
        on_signal: OnSignal::Interrupt,
        ..SessionRequest::default()
    };
    let mut m = Measurements::new(3);
    for v in &good {
        m.add_session(0, v)?;
    }
    for v in &bad {
        m.add_session(2, v)?;
    }
    let sessions = request.sessions.max(1);
    let mut last = None;
    for _ in 0..sessions {
        let ran = match run_session(&session, location, signals, observer)? {
            SessionEnd::Ran(ran) => ran,
            SessionEnd::NotStarted { signal } => return Ok(JudgeEnd::Interrupted { signal }),
            SessionEnd::Skipped { reason, .. } => {
                return Err(bisect_error(format!("the session was skipped: {reason}")))
            }
        };
        if let Ending::Interrupted { signal } = ran.ending {
            return Ok(JudgeEnd::Interrupted { signal });
        }
        let store = database::open(location, Access::Read)?;
        let s = store
            .load_session(ran.session, Load::MEASUREMENTS)
            .map_err(|source| AppError::LoadSession {
                id: ran.session,
                source,
            })?;
        let Some(config) = s.configurations.first() else {
            return Err(bisect_error("the session measured nothing"));
        };
        let values = metric_values(config, request.metric.as_deref());
        let higher_is_better = config
            .record
            .secondary_metrics
            .iter()
            .chain([&config.record.metric])
            .find(|m| Some(m.name.as_str()) == request.metric.as_deref())
            .unwrap_or(&config.record.metric)
            .higher_is_better;
        if values.is_empty() {
            return Ok(JudgeEnd::Judged {
                session: ran.session,
                step: None,
                call: Call::Skipped,
                higher_is_better,
            });
        }
        m.add_session(1, &values)?;
        let settings = BisectSettings {
            threshold: request.threshold,
            higher_is_better,
            end_sessions: 1,
            commit_sessions: sessions as usize,
            budget_sessions: usize::MAX,
            ..BisectSettings::default()
        };
        let p = plan(&m, &[], &settings)?;
        let step = p.steps.first().cloned();
        let call = match (&p.outcome, &step) {
            (Outcome::NoRegression | Outcome::Measure { index: 0 | 2 }, _) => {
                return Err(bisect_error(format!(
                    "the ends are not apart: --bad {} is not worse than --good {} by the \
                     threshold with 95% confidence; measure more sessions at the ends",
                    request.bad, request.good
                )))
            }
            (_, Some(step)) => step.call,
            (_, None) => Call::Skipped,
        };
        last = Some(JudgeEnd::Judged {
            session: ran.session,
            step,
            call,
            higher_is_better,
        });
        if call != Call::Undecided {
            break;
        }
    }
    last.ok_or_else(|| bisect_error("no session ran"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn one_resume_at_a_time_runs_a_bisection_s_steps() {
        let dir = tempfile::tempdir().unwrap();
        let id = Uuid::new_v4();
        let first = StepsLock::take_in(dir.path(), id).unwrap();
        // flock(2) locks belong to an open file description: a second open conflicts even
        // within one process, as a second `vernier bisect resume` would.
        let Err(AppError::Bisect(message)) = StepsLock::take_in(dir.path(), id) else {
            panic!("a second lock was granted");
        };
        assert!(
            message.contains("another `vernier bisect resume`"),
            "{message}"
        );
        assert!(message.contains(&id.to_string()), "{message}");
        drop(first);
        StepsLock::take_in(dir.path(), id).unwrap();
    }
}
