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

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use uuid::Uuid;
// The state is plain data, which the site shows too.
use vernier_analysis::bisect::{commit_levels, plan, BisectSettings, Measurements, Outcome};
pub use vernier_analysis::bisect::{BisectState, CommitSessions};
use vernier_model::bisect::{BISECT_TAG, COMMIT_TAG};
use vernier_model::{BisectTerms, Bisection, SessionStatus, SettingsLayer, CONFIDENCE_LEVEL};
use vernier_store::{Access, Load, Location, Store};
use vernier_sys::process::Group;

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
}

/// How [`resume`] ended.
#[derive(Debug)]
pub enum BisectEnd {
    /// The rule has nothing more to measure: its outcome is in the state.
    Finished(Box<BisectState>),
    /// A signal ended a session or the wait: `bisect resume` continues.
    Interrupted { signal: Option<i32> },
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
    for c in &bisection.unbuildable {
        if let Some(&i) = index.get(c.as_str()) {
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
        if values.is_empty() || session.info.status == SessionStatus::Running {
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

/// The bisection's work tree, added on first use (detached, under [`state_dir`]).
fn work_tree(b: &Bisection) -> Result<PathBuf, AppError> {
    let dir = state_dir(b.id)?;
    let tree = dir.join("tree");
    if !tree.join(".git").exists() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| bisect_error(format!("cannot create {}: {e}", dir.display())))?;
        let first = b.commits.first().map_or("HEAD", String::as_str);
        let path = tree.to_string_lossy().into_owned();
        git(
            Path::new(&b.repo),
            &["worktree", "add", "--detach", "--force", &path, first],
        )?;
    }
    Ok(tree)
}

/// Checks commit `commit` out in the work tree and builds it, unless it is what was built last;
/// whether the build succeeded.
fn build(
    b: &mut Bisection,
    tree: &Path,
    index: usize,
    store: &mut dyn Store,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<bool, AppError> {
    let commit = b.commits[index].clone();
    let dir = state_dir(b.id)?;
    let marker = dir.join("built");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(commit.as_str()) {
        return Ok(true);
    }
    let _ = std::fs::remove_file(&marker);
    git(
        tree,
        &["checkout", "--quiet", "--detach", "--force", &commit],
    )?;
    git(tree, &["clean", "-fdxq"])?;
    let Some(build) = b.terms.build.clone() else {
        std::fs::write(&marker, &commit)
            .map_err(|e| bisect_error(format!("cannot write {}: {e}", marker.display())))?;
        return Ok(true);
    };
    notice(BisectNotice::Building {
        index,
        commit: commit.clone(),
    });
    let log = dir.join(format!("build-{commit}.log"));
    let started = std::time::Instant::now();
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(&build).current_dir(tree);
    let (ok, _) = run_command(&mut command, Some(&log))?;
    b.build_s += started.elapsed().as_secs_f64();
    if ok {
        std::fs::write(&marker, &commit)
            .map_err(|e| bisect_error(format!("cannot write {}: {e}", marker.display())))?;
    } else {
        b.unbuildable.push(commit.clone());
        notice(BisectNotice::BuildFailed { index, commit, log });
    }
    store.put_bisection(b)?;
    Ok(ok)
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

/// A database location that stays right when the working directory changes.
fn absolute(location: &Location) -> Location {
    match location {
        Location::File(path) if path.is_relative() => std::env::current_dir()
            .map(|d| Location::File(d.join(path)))
            .unwrap_or_else(|_| location.clone()),
        other => other.clone(),
    }
}

/// Runs the bisection's steps until the rule has nothing more to measure or a signal comes.
pub fn resume(
    location: &Location,
    signals: &mut Signals,
    observer: &mut dyn Observer,
    notice: &mut dyn FnMut(BisectNotice),
) -> Result<BisectEnd, AppError> {
    let location = absolute(location);
    let mut store = database::open(&location, Access::Write)?;
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
        let tree = work_tree(&b)?;
        if !build(&mut b, &tree, index, store.as_mut(), notice)? {
            continue;
        }
        let commit = b.commits[index].clone();
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

/// Ends the bisection in progress: its work tree and state directory are removed, its record
/// deleted; its sessions stay.
pub fn reset(location: &Location) -> Result<Bisection, AppError> {
    let mut store = database::open(location, Access::Write)?;
    let b = current(store.as_ref())?;
    let dir = state_dir(b.id)?;
    let tree = dir.join("tree");
    if tree.exists() {
        let path = tree.to_string_lossy().into_owned();
        // The repository may be gone; the directory is removed below either way.
        let _ = git(
            Path::new(&b.repo),
            &["worktree", "remove", "--force", &path],
        );
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
