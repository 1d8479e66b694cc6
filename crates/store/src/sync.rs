//! Copying sessions from one store to another (`vernier sync`, `vernier merge`): every session
//! the target lacks, by its UUID, each in its own transaction, so that copying again copies
//! nothing twice and an interrupted copy resumes where it stopped.
//!
//! A session is the unit: its configurations, runs, values, histograms, monitor data and
//! profiled runs go together through [`Store::import_sessions`], which stores the ids as they are (nothing is
//! renumbered, so a session keeps its identity on every machine) and refuses an id stored with
//! other content. A session still being recorded (a latency monitor runs for days) is copied
//! as far as it has been recorded, every run of it finished; each later copy adds the runs
//! recorded since ([`Store::extend_session`]), and the one after it has ended its final status.
//! Such a step reads of the source only the runs the target lacks ([`Store::load_session_runs`]).

use std::collections::{BTreeMap, HashMap};

use uuid::Uuid;
use vernier_model::{RunPlace, SessionStatus, Texts};

use vernier_sys::process::ProcessIdentity;

use crate::{Extension, HeldRuns, Load, RunsPage, SessionHeader, Store, StoreError};

/// What happened to one session of the source, in the order of the source (oldest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncStep {
    /// Stored in the target, with this many runs (warmups included); `running` when the
    /// session is still being recorded, so that a later copy adds its later runs.
    Copied {
        id: Uuid,
        runs: usize,
        running: bool,
    },
    /// Stored earlier while it was being recorded; now its runs recorded since (this many)
    /// and, once it has ended (`running` false), its status and end time.
    Extended {
        id: Uuid,
        runs: usize,
        running: bool,
    },
    /// The target already holds it.
    Present { id: Uuid },
    /// The target holds it with other tags, note, status or runs (changed in one of the
    /// stores after an earlier copy); it is left as it is.
    Differs { id: Uuid },
    /// Still being recorded, and the target holds every run of it recorded so far.
    Running { id: Uuid },
}

/// The counts of a copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub copied: usize,
    /// Runs of the copied sessions, warmups included.
    pub runs: usize,
    /// Sessions copied before while they were being recorded, that got their later runs or
    /// their end.
    pub extended: usize,
    /// Runs added to those, warmups included.
    pub added_runs: usize,
    pub present: usize,
    pub differs: usize,
    /// Sessions still being recorded in the source (copied, extended or unchanged), whose
    /// later runs a later copy adds.
    pub running: usize,
}

impl SyncReport {
    fn count(&mut self, step: SyncStep) {
        match step {
            SyncStep::Copied { runs, running, .. } => {
                self.copied += 1;
                self.runs += runs;
                self.running += usize::from(running);
            }
            SyncStep::Extended { runs, running, .. } => {
                self.extended += 1;
                self.added_runs += runs;
                self.running += usize::from(running);
            }
            SyncStep::Present { .. } => self.present += 1,
            SyncStep::Differs { .. } => self.differs += 1,
            SyncStep::Running { .. } => self.running += 1,
        }
    }
}

/// Copies every session of `from` that `to` lacks, oldest first, one transaction per session
/// (with the kernel configuration texts it refers to), and adds to the sessions that `to` got
/// while they were still being recorded what `from` has recorded of them since. It tells
/// `each` what it did with every session of `from` after doing it. An error stops the copy;
/// the sessions copied before it stay, and the next copy starts with the first session still
/// missing.
///
/// Several copies into one target at once (machines of a farm syncing to one server) may race
/// for the same session: when storing it fails because another copy stored it meanwhile (or
/// the two deadlocked), it is tried again, which finds it stored and compares it like any
/// present session.
pub fn copy_sessions<F, T>(
    from: &F,
    to: &mut T,
    mut each: impl FnMut(SyncStep),
) -> Result<SyncReport, StoreError>
where
    F: Store + ?Sized,
    T: Store + ?Sized,
{
    copy_selected(from, to, |_| true, &mut each)
}

/// [`copy_sessions`] of the sessions of `from` that `selected` keeps; the others count as
/// still running ([`SyncReport::running`]).
fn copy_selected<F, T>(
    from: &F,
    to: &mut T,
    selected: impl Fn(&SessionHeader) -> bool,
    each: &mut dyn FnMut(SyncStep),
) -> Result<SyncReport, StoreError>
where
    F: Store + ?Sized,
    T: Store + ?Sized,
{
    let present: HashMap<Uuid, SessionHeader> = to
        .session_headers()?
        .into_iter()
        .map(|h| (h.id, h))
        .collect();
    let mut report = SyncReport::default();
    for header in from.session_headers()? {
        let id = header.id;
        if !selected(&header) {
            report.running += 1;
            continue;
        }
        let step = match present.get(&id) {
            None => copy_one(from, to, &header)?,
            Some(stored) if unfinished(stored.status) => follow(from, to, &header, stored)?,
            Some(stored) if same_header(stored, &header) => SyncStep::Present { id },
            Some(_) => SyncStep::Differs { id },
        };
        report.count(step);
        each(step);
    }
    Ok(report)
}

/// Whether a session as a store reads it may still grow: it is being recorded, or it was
/// copied while it was (it reads as abandoned where no process records it).
fn unfinished(status: SessionStatus) -> bool {
    matches!(status, SessionStatus::Running | SessionStatus::Abandoned)
}

/// The step for a session that the target holds as it was while being recorded: nothing when
/// the target holds every run and the end of it that the source has, otherwise the runs
/// recorded since and, once it has ended, its end. A target that holds what the source lacks
/// (another session under the same id, or the source's copy is the older) is left alone.
fn follow<F, T>(
    from: &F,
    to: &mut T,
    header: &SessionHeader,
    stored: &SessionHeader,
) -> Result<SyncStep, StoreError>
where
    F: Store + ?Sized,
    T: Store + ?Sized,
{
    let id = header.id;
    let running = header.status == SessionStatus::Running;
    let unchanged = || {
        if running {
            SyncStep::Running { id }
        } else if same_header(stored, header) {
            SyncStep::Present { id }
        } else {
            SyncStep::Differs { id }
        }
    };
    // First what both stores keep of how far the session has been recorded: a step with
    // nothing new (the common one, a sync every minute of a monitor's interval of 5) reads a
    // few rows of configurations, not the session's runs.
    if header.ended_at_ns == stored.ended_at_ns && from.session_mark(id)? == to.session_mark(id)? {
        return Ok(unchanged());
    }
    let (source, target) = (from.session_progress(id)?, to.session_progress(id)?);
    if !source.covers(&target) {
        return Ok(SyncStep::Differs { id });
    }
    if source == target && header.ended_at_ns == stored.ended_at_ns {
        return Ok(unchanged());
    }
    // Only the runs the target lacks are read and written: a latency monitor's session holds a
    // run per interval, some 100,000 in a year, of which a sync adds the few recorded since
    // the last one; a copy stopped midway ([`copy_one`]) lacks the rest of the session, which
    // is added [`RUNS_PER_PART`] runs a transaction, the end with the last part.
    let lacking: Vec<RunPlace> = source.runs.difference(&target.runs).copied().collect();
    let parts = lacking.chunks(RUNS_PER_PART).count().max(1);
    let mut total = Extension::default();
    for (at, part) in lacking
        .chunks(RUNS_PER_PART)
        .chain(lacking.is_empty().then_some(&[][..]))
        .enumerate()
    {
        let mut page = from.copy_runs(id, &part.iter().copied().collect())?;
        // A session recorded before vernier escaped what it records holds its texts raw; the
        // target refuses them (vernier_model::text).
        page.session.escape_controls();
        if at + 1 < parts {
            still_recorded(&mut page.session.info);
        }
        // A copy in more than one part says so until its last part ([`SessionHeader::copying`]).
        let copying = match (at == 0, at + 1 == parts) {
            (_, true) => Some(None),
            (true, false) => Some(Some(source.runs.len() as u64)),
            (false, false) => None,
        };
        let extension = store_part(
            to,
            &page,
            running.then_some(header.owner.as_ref()).flatten(),
            copying,
        )?;
        if !extension.extended {
            break;
        }
        total.extended = true;
        total.runs += extension.runs;
    }
    Ok(if total.extended {
        SyncStep::Extended {
            id,
            runs: total.runs,
            running,
        }
    } else {
        // Another copy ended it in the target meanwhile.
        SyncStep::Present { id }
    })
}

/// Marks `info` as a session still being recorded: how a session copied in parts is stored
/// until its last part, which brings its end ([`copy_one`]), so that a copy stopped midway
/// is followed by the next as a session recorded further.
fn still_recorded(info: &mut vernier_model::SessionInfo) {
    info.status = SessionStatus::Running;
    info.ended_at_ns = None;
}

/// Stores `page` of a session the target holds as still being recorded, in a transaction of
/// its own ([`crate::Import::extend_page`]), with the process that records it (`owner`) and, when
/// `copying` says, whether a copy of it is still in progress ([`crate::Import::mark_copying`]).
fn store_part<T: Store + ?Sized>(
    to: &mut T,
    page: &RunsPage,
    owner: Option<&ProcessIdentity>,
    copying: Option<Option<u64>>,
) -> Result<Extension, StoreError> {
    // The runs of a part are those the target lacked when the copy compared the stores: no
    // lookup of them, unless another copy stored some meanwhile (a retry).
    let mut held = HeldRuns::None;
    with_retries(|| {
        vernier_model::validate::check_session(&page.session)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let mut import = to.importer(page.runs())?;
        let extension =
            import.extend_page(page, std::mem::replace(&mut held, HeldRuns::Unknown))?;
        // A copy stored before the owner was copied gets it now.
        if let (true, Some(owner)) = (extension.extended, owner) {
            import.set_owner(page.session.info.id, owner)?;
        }
        if let (true, Some(runs)) = (extension.extended, copying) {
            import.mark_copying(page.session.info.id, runs)?;
        }
        import.commit()?;
        Ok(extension)
    })
}

/// Runs `store` again while it fails by losing a race with another copy into the same target
/// ([`lost_race`]), at most [`RACE_RETRIES`] times in all.
fn with_retries<R>(mut store: impl FnMut() -> Result<R, StoreError>) -> Result<R, StoreError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match store() {
            Err(e) if attempt < RACE_RETRIES && lost_race(&e) => continue,
            other => return other,
        }
    }
}

/// How many runs a copy reads from the source and stores at once, each part in a transaction
/// of its own: the memory of a copy is bounded by this many runs with their histograms and
/// monitor data, whatever the size of the session, and a copy stopped midway loses at most
/// one part's work. A latency monitor's run (an interval, with the default monitors' time
/// series) takes some 100 KB while it is copied, decoded and as the statement's values: 5,000
/// runs made a copy of 550 MB.
const RUNS_PER_PART: usize = 1_000;

/// Copies one session and the kernel configuration it refers to, [`RUNS_PER_PART`] runs at a
/// time, each part in a transaction of its own: the session with its configurations and its
/// first part, then the others ([`Store::copy_page`]). A session of more than one part is
/// stored as still being recorded until its last part brings its end, so that a copy stopped
/// midway (a network outage, Ctrl-C, the machine going down) leaves the parts it committed,
/// and the next copy follows the session as any session recorded further ([`follow`]):
/// nothing is lost and nothing is copied twice. A session still being recorded is stored with
/// the process that records it ([`crate::Import::set_owner`]).
fn copy_one<F, T>(from: &F, to: &mut T, header: &SessionHeader) -> Result<SyncStep, StoreError>
where
    F: Store + ?Sized,
    T: Store + ?Sized,
{
    let id = header.id;
    // The configurations with their profiled runs (a few KiB each), stored with the session;
    // the runs follow in parts.
    let mut session = from.load_session(
        id,
        Load {
            profiles: true,
            ..Load::INFO
        },
    )?;
    session.escape_controls();
    let mut kernel_configs = BTreeMap::new();
    if let Some(sha256) = &session.info.environment.kernel_config_sha256 {
        if let Some(text) = from.kernel_config(sha256)? {
            kernel_configs.insert(sha256.clone(), text);
        }
    }
    let running = session.info.status == SessionStatus::Running;
    let owner = running.then_some(header.owner.as_ref()).flatten();
    let (mut first, mut next) = from.copy_page(id, None, RUNS_PER_PART)?;
    // Runs of the source: what a copy in parts says it is bringing ([`SessionHeader::copying`]).
    let of: u64 = match next {
        Some(_) => from
            .session_mark(id)?
            .configurations
            .values()
            .map(|m| m.runs)
            .sum(),
        None => 0,
    };
    first.session.escape_controls();
    let mut begun = session.clone();
    if next.is_some() {
        still_recorded(&mut begun.info);
    }
    let mut attempt = 0;
    let imported = with_retries(|| {
        attempt += 1;
        // A retry follows a lost race: the other copy may have stored the session.
        if attempt > 1 && to.resolve(&id.to_string()).is_ok() {
            return Ok(None);
        }
        // Checked whole before the transaction starts, as import_sessions does.
        vernier_model::validate::check_kernel_configs(&kernel_configs)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let mut import = to.importer(first.runs())?;
        for (sha256, text) in &kernel_configs {
            import.kernel_config(sha256, text)?;
        }
        let imported = import.report().imported;
        import.session(&begun)?;
        if import.report().imported == imported {
            return Ok(None);
        }
        let runs = import.add_page(&first)?;
        if let Some(owner) = owner {
            import.set_owner(id, owner)?;
        }
        if next.is_some() {
            import.mark_copying(id, Some(of))?;
        }
        import.commit()?;
        Ok(Some(runs))
    })?;
    let Some(mut runs) = imported else {
        return Ok(SyncStep::Present { id });
    };
    drop(first);
    while let Some(cursor) = next {
        let (mut page, after) = from.copy_page(id, Some(cursor), RUNS_PER_PART)?;
        page.session.escape_controls();
        next = after;
        if next.is_some() {
            still_recorded(&mut page.session.info);
        }
        let extension = store_part(to, &page, owner, next.is_none().then_some(None))?;
        if !extension.extended {
            // Another copy stored the rest and ended it meanwhile.
            break;
        }
        runs += extension.runs;
    }
    Ok(SyncStep::Copied { id, runs, running })
}

/// How often storing one session is tried in all when it loses a race with another copy into
/// the same target. The first retry follows the other copy's commit and finds the session
/// stored; more are for deadlocks among several copies at once.
const RACE_RETRIES: u32 = 5;

/// Whether storing a session failed because another copy into the same target was storing it
/// (or rows it shares, such as monitor names) at the same time: its id already stored (the
/// session, or one of its configurations or runs, which the import reports as a conflict), or
/// a deadlock or serialization failure that rolled the transaction back. Trying again finds
/// the session stored and compares it, or stores it.
fn lost_race(e: &StoreError) -> bool {
    e.is_duplicate_key()
        || e.is_transaction_conflict()
        || matches!(e, StoreError::Database(_) | StoreError::Conflict(_))
}

/// Whether two headers of one session say the same of what can change after it was recorded:
/// tags, note and status (an abandoned session reads as running where it was imported).
fn same_header(a: &SessionHeader, b: &SessionHeader) -> bool {
    let finished = |s: SessionStatus| match s {
        SessionStatus::Running => SessionStatus::Abandoned,
        other => other,
    };
    a.tags == b.tags && a.note == b.note && finished(a.status) == finished(b.status)
}

/// Merges the sessions of `inputs` that have ended (`vernier merge`) into `to`, the first
/// input first, each through [`copy_sessions`]' copy: part by part, [`RUNS_PER_PART`] runs a
/// transaction, so that a merge of any size takes the memory of a part and a merge stopped
/// midway is resumed by merging the same inputs again, each run stored once. A session still
/// being recorded is left out (counted in [`SyncReport::running`]): a merged database is a
/// finished collection. It tells `each` what it did with every session, with the index of
/// its input; returns the report of each input.
///
/// Nothing is stored unless every session held by more than one of the inputs and the target
/// is the same session in all of them ([`check_merge`]): one id with two contents (one copy
/// tagged or noted after the copy) is [`StoreError::Conflict`], naming the first difference.
pub fn merge_sessions(
    inputs: &[&dyn Store],
    to: &mut dyn Store,
    mut each: impl FnMut(usize, SyncStep),
) -> Result<Vec<SyncReport>, StoreError> {
    check_merge(inputs, to)?;
    let mut reports = Vec::with_capacity(inputs.len());
    for (at, from) in inputs.iter().enumerate() {
        let mut changed = None;
        let report = copy_selected(*from, &mut *to, ended, &mut |step| {
            if let SyncStep::Differs { id } = step {
                changed.get_or_insert(id);
            }
            each(at, step);
        })?;
        // Checked the same before: another program changed one of the two meanwhile.
        if let Some(id) = changed {
            return Err(StoreError::Conflict(format!(
                "session {id} of {} and of {} changed while they were merged; merge again to \
                 compare them",
                from.location(),
                to.location()
            )));
        }
        reports.push(report);
    }
    Ok(reports)
}

/// Whether a session is merged: it has ended (a session whose recording process died,
/// `abandoned`, has ended as far as anything will end it).
fn ended(header: &SessionHeader) -> bool {
    header.status != SessionStatus::Running
}

/// Checks, before a merge stores anything, that every session held by more than one of
/// `inputs` and `to` is one session: the same information, tags, note, status, environment and
/// configurations, as many runs with the same end of the latest in each configuration (the
/// marks kept with the runs, [`Store::session_mark`]) and, part by part, the same runs with the
/// same measurements (values, times, resource usage, setup steps; a run's histograms and
/// monitor data are recorded with it and never changed, so two copies of a run with the same
/// measurements are one run). Memory stays that of a part whatever the sessions' length.
///
/// A session that `to` holds as still being recorded (a merge or sync stopped midway, or one
/// recorded further since) needs only to be covered by the input's: every configuration and
/// run of it in the input ([`SessionProgress::covers`]); the merge adds the rest.
pub fn check_merge(inputs: &[&dyn Store], to: &dyn Store) -> Result<(), StoreError> {
    enum Holder {
        Target(Box<SessionHeader>),
        Input(usize),
    }
    let mut holders: HashMap<Uuid, Holder> = to
        .session_headers()?
        .into_iter()
        .map(|h| (h.id, Holder::Target(Box::new(h))))
        .collect();
    for (at, input) in inputs.iter().enumerate() {
        for header in input.session_headers()? {
            let id = header.id;
            if !ended(&header) {
                continue;
            }
            match holders.get(&id) {
                None => {
                    holders.insert(id, Holder::Input(at));
                }
                Some(Holder::Target(stored))
                    if unfinished(stored.status)
                        && (stored.ended_at_ns != header.ended_at_ns
                            || to.session_mark(id)? != input.session_mark(id)?) =>
                {
                    if !input
                        .session_progress(id)?
                        .covers(&to.session_progress(id)?)
                    {
                        return Err(StoreError::Conflict(format!(
                            "session {id} is in {} with runs or configurations that it lacks \
                             in {}",
                            to.location(),
                            input.location()
                        )));
                    }
                }
                Some(Holder::Target(_)) => compare_copies(to, *input, id)?,
                Some(Holder::Input(first)) => compare_copies(inputs[*first], *input, id)?,
            }
        }
    }
    Ok(())
}

/// Checks that session `id` is the same in `a` and `b` ([`check_merge`]), reading a part of
/// its runs at a time.
fn compare_copies(a: &dyn Store, b: &dyn Store, id: Uuid) -> Result<(), StoreError> {
    let differ = |field: &str| {
        StoreError::Conflict(format!(
            "session {id} is in {} and in {} with other content (first difference: {field}); \
             delete it from one of them to merge",
            a.location(),
            b.location()
        ))
    };
    // As stored: texts escaped as every copy escapes them, and an abandoned session is the
    // same as the copy that reads running (a copy carries no process).
    let compared = |mut session: vernier_model::StoredSession| {
        session.escape_controls();
        if session.info.status == SessionStatus::Running {
            session.info.status = SessionStatus::Abandoned;
        }
        session
    };
    let info = Load {
        profiles: true,
        ..Load::INFO
    };
    let (first, second) = (
        compared(a.load_session(id, info)?),
        compared(b.load_session(id, info)?),
    );
    if let Some(field) = vernier_model::validate::difference(&first, &second) {
        return Err(differ(&field));
    }
    let (marks_a, marks_b) = (a.session_mark(id)?, b.session_mark(id)?);
    if let Some(field) = mark_difference(&marks_a, &marks_b) {
        return Err(differ(&field));
    }
    // The two copies' parts side by side while they hold the same runs (both stored the runs
    // in one order: a copy stores them in the order it reads them), read as ranges of keys;
    // otherwise the other's runs of each part are looked up by their places.
    let (mut after_a, mut after_b) = (None, None);
    let mut aligned = true;
    loop {
        let (page, next) = b.load_session_page(id, Load::MEASUREMENTS, after_b, RUNS_PER_PART)?;
        let runs = run_places(&page);
        let mut held = None;
        if aligned {
            let (part, next_a) =
                a.load_session_page(id, Load::MEASUREMENTS, after_a, RUNS_PER_PART)?;
            let same = run_places(&part) == runs;
            aligned = same && next_a.is_some() == next.is_some();
            if same {
                held = Some(part);
            }
            after_a = next_a;
        }
        let held = match held {
            Some(part) => part,
            None => a.load_session_runs(id, Load::MEASUREMENTS, &runs)?,
        };
        if let Some(field) = vernier_model::validate::difference(&compared(held), &compared(page)) {
            return Err(differ(&field));
        }
        match next {
            Some(cursor) => after_b = Some(cursor),
            None => return Ok(()),
        }
    }
}

/// The places of the runs of `session`.
fn run_places(session: &vernier_model::StoredSession) -> std::collections::BTreeSet<RunPlace> {
    session
        .configurations
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| r.place(c.record.id)))
        .collect()
}

/// The first configuration whose runs, end of the latest or way of stopping differ between
/// two marks of one session, as a field of [`check_merge`]'s message.
fn mark_difference(a: &crate::SessionMark, b: &crate::SessionMark) -> Option<String> {
    let (id, mark) = a
        .configurations
        .iter()
        .find(|(id, mark)| b.configurations.get(id) != Some(mark))
        .or_else(|| {
            b.configurations
                .iter()
                .find(|(id, _)| !a.configurations.contains_key(id))
        })?;
    let other = b.configurations.get(id);
    Some(match other {
        Some(other) if other.runs != mark.runs => format!(
            "the runs of configuration {id} (the one holds {}, the other {})",
            mark.runs, other.runs
        ),
        Some(other) if other.stopped != mark.stopped => {
            format!("how configuration {id} stopped")
        }
        Some(_) => format!("the end of the latest run of configuration {id}"),
        None => format!("configuration {id} (in one of them only)"),
    })
}
