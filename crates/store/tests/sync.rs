//! `copy_sessions`: every session the target lacks, once, and the runs a running one has
//! recorded since the last copy, one transaction per session, so that a copy stopped by an error
//! resumes where it stopped.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use uuid::Uuid;
use vernier_model::{Recorder, RunHistogram, RunPlace, SessionStatus, StopReason};
use vernier_store::{
    copy_sessions, merge_sessions, Access, Histograms, Load, Location, SqliteStore, Store,
    SyncReport, SyncStep,
};
use vernier_testkit::{databases, still_running, stored_session};

fn open(dir: &tempfile::TempDir, name: &str) -> SqliteStore {
    SqliteStore::open(&dir.path().join(name)).unwrap()
}

fn ids(store: &SqliteStore) -> Vec<Uuid> {
    store
        .session_headers()
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn steps(from: &SqliteStore, to: &mut SqliteStore) -> (SyncReport, Vec<SyncStep>) {
    copy_to(from, to)
}

/// A copy that must succeed, with every step it took.
fn copy_to(from: &dyn Store, to: &mut dyn Store) -> (SyncReport, Vec<SyncStep>) {
    let mut steps = Vec::new();
    let report = copy_sessions(from, to, |s| steps.push(s)).unwrap();
    (report, steps)
}

/// Copies `from` into `to` (of `engine`), checks that it took the one step `step` and that
/// `to` then holds `expected` (a session) exactly; returns the report.
fn copy_and_check(
    from: &dyn Store,
    to: &mut dyn Store,
    step: SyncStep,
    expected: &vernier_model::StoredSession,
    engine: &str,
) -> SyncReport {
    let (report, steps) = copy_to(from, to);
    assert_eq!(steps, [step], "{engine}");
    assert_eq!(
        &to.load_session(expected.info.id, Load::ALL).unwrap(),
        expected,
        "{engine}"
    );
    report
}

#[test]
fn a_copy_stores_each_missing_session_once_with_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = open(&dir, "machine.db");
    let (a, b) = (
        stored_session(1_000, &[1.0, 2.0]),
        stored_session(2_000, &[3.0]),
    );
    source
        .import_sessions(&[a.clone(), b.clone()], &BTreeMap::new())
        .unwrap();
    let mut target = open(&dir, "central.db");

    let (report, first) = steps(&source, &mut target);
    assert_eq!(
        first,
        [
            SyncStep::Copied {
                id: a.info.id,
                runs: 2,
                running: false
            },
            SyncStep::Copied {
                id: b.info.id,
                runs: 1,
                running: false
            }
        ]
    );
    assert_eq!((report.copied, report.runs, report.present), (2, 3, 0));
    assert_eq!(target.load_session(a.info.id, Load::ALL).unwrap(), a);
    assert_eq!(target.load_session(b.info.id, Load::ALL).unwrap(), b);

    // Again: nothing to copy.
    let (report, _) = steps(&source, &mut target);
    assert_eq!((report.copied, report.present), (0, 2));

    // A new session, and a tag changed on the machine after the copy: only the new one is
    // copied, the changed one is reported and left alone.
    let c = stored_session(3_000, &[4.0]);
    source
        .import_sessions(std::slice::from_ref(&c), &BTreeMap::new())
        .unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("machine.db")).unwrap();
    conn.execute(
        "INSERT INTO session_tags (session_id, key, value) VALUES (?1, 'kernel', 'A')",
        [a.info.id.to_string()],
    )
    .unwrap();
    let (report, third) = steps(&source, &mut target);
    assert_eq!(
        third,
        [
            SyncStep::Differs { id: a.info.id },
            SyncStep::Present { id: b.info.id },
            SyncStep::Copied {
                id: c.info.id,
                runs: 1,
                running: false
            }
        ]
    );
    assert_eq!((report.copied, report.differs), (1, 1));
    assert_eq!(ids(&target), [a.info.id, b.info.id, c.info.id]);
    assert!(target
        .load_session(a.info.id, Load::ALL)
        .unwrap()
        .info
        .tags
        .is_empty());
}

#[test]
fn a_copy_stopped_by_an_error_keeps_what_it_copied_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = open(&dir, "machine.db");
    let sessions = [
        stored_session(1_000, &[1.0]),
        stored_session(2_000, &[2.0]),
        stored_session(3_000, &[3.0]),
    ];
    source.import_sessions(&sessions, &BTreeMap::new()).unwrap();

    // The target holds another session whose run has the id of a run of the second session:
    // storing the second fails, the copy stops there.
    let mut target = open(&dir, "central.db");
    let mut squatter = stored_session(500, &[9.0]);
    squatter.configurations[0].runs[0].id = sessions[1].configurations[0].runs[0].id;
    target
        .import_sessions(&[squatter.clone()], &BTreeMap::new())
        .unwrap();
    let mut seen = Vec::new();
    let error = copy_sessions(&source, &mut target, |s| seen.push(s)).unwrap_err();
    assert!(error.to_string().contains("already stored"), "{error}");
    assert_eq!(
        seen,
        [SyncStep::Copied {
            id: sessions[0].info.id,
            runs: 1,
            running: false
        }]
    );
    assert_eq!(ids(&target), [squatter.info.id, sessions[0].info.id]);
    // Nothing of the second session was stored: no configuration, no run.
    assert!(target
        .load_session(sessions[1].info.id, Load::INFO)
        .is_err());

    // With the obstacle gone, the next copy starts with the first session still missing.
    target.delete_session(squatter.info.id).unwrap();
    let (report, steps) = steps(&source, &mut target);
    assert_eq!(
        steps,
        [
            SyncStep::Present {
                id: sessions[0].info.id
            },
            SyncStep::Copied {
                id: sessions[1].info.id,
                runs: 1,
                running: false
            },
            SyncStep::Copied {
                id: sessions[2].info.id,
                runs: 1,
                running: false
            }
        ]
    );
    assert_eq!(report.copied, 2);
    for s in &sessions {
        assert_eq!(&target.load_session(s.info.id, Load::ALL).unwrap(), s);
    }
}

/// A session being recorded for days (a latency monitor's), copied by every sync on the way,
/// into a target of each engine: the first copy stores the runs recorded so far, each later one
/// those recorded since, every run once, each step in one transaction (a step that fails
/// stores nothing of it, and the next copy does it whole), and the copy after the session has
/// ended gives it its status and end time: then the target holds exactly the source's session.
#[test]
fn a_running_session_is_copied_as_far_as_recorded_and_followed_until_it_ends() {
    for db in databases("a_running_session_is_copied_as_far_as_recorded_and_followed_until_it_ends")
    {
        let dir = tempfile::tempdir().unwrap();
        let mut source = open(&dir, "machine.db");
        let mut target =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();

        let mut session = stored_session(1_000, &[1.0, 2.0, 3.0, 4.0, 5.0]);
        // The third run was measured while something else had changed the setup, which the
        // session says in a finding it adds as it runs.
        session.configurations[0].runs[2].setup_changed = vec![vernier_model::ChangedSetting {
            setting: "/proc/sys/vm/swappiness".into(),
            set: "10".into(),
            found: "60".into(),
        }];
        let finding = vernier_model::Finding::new(
            "setup-changed",
            vernier_model::Severity::Warning,
            "something else changed a value the session's setup set",
            "/proc/sys/vm/swappiness is 60 (set: 10) after measured run 3",
        );
        let id = session.info.id;
        let (info, record) = still_running(&session);
        session.info.findings.push(finding.clone());
        let runs = &session.configurations[0].runs;
        // Recorded by this process, which lives: running.
        source.begin_session(&info).unwrap();
        source.add_configuration(id, &record).unwrap();
        source.add_run(record.id, &runs[0]).unwrap();
        source.add_run(record.id, &runs[1]).unwrap();

        let run_ids = |store: &dyn Store| -> Vec<Uuid> {
            store.load_session(id, Load::ALL).unwrap().configurations[0]
                .runs
                .iter()
                .map(|r| r.id)
                .collect()
        };
        let engine = db.engine();
        let (report, steps) = copy_to(&source, target.as_mut());
        assert_eq!(
            steps,
            [SyncStep::Copied {
                id,
                runs: 2,
                running: true
            }],
            "{engine}"
        );
        assert_eq!((report.copied, report.running), (1, 1), "{engine}");
        assert_eq!(
            run_ids(target.as_ref()),
            [runs[0].id, runs[1].id],
            "{engine}"
        );
        // The copy carries the process that records it: on this machine, where that process
        // lives, the copy reads as running, as the source does.
        assert_eq!(
            target.session_headers().unwrap()[0].status,
            SessionStatus::Running,
            "{engine}"
        );
        assert_eq!(
            target.session_headers().unwrap()[0].owner,
            Some(vernier_sys::process::ProcessIdentity::current()),
            "{engine}"
        );

        // Nothing recorded since: nothing to do.
        let (report, steps) = copy_to(&source, target.as_mut());
        assert_eq!(steps, [SyncStep::Running { id }], "{engine}");
        assert_eq!((report.copied, report.extended, report.running), (0, 0, 1));

        source.add_finding(id, &finding).unwrap();
        source.add_run(record.id, &runs[2]).unwrap();
        let (report, steps) = copy_to(&source, target.as_mut());
        assert_eq!(
            steps,
            [SyncStep::Extended {
                id,
                runs: 1,
                running: true
            }],
            "{engine}"
        );
        assert_eq!((report.extended, report.added_runs), (1, 1), "{engine}");
        assert_eq!(
            run_ids(target.as_ref()),
            runs[..3].iter().map(|r| r.id).collect::<Vec<_>>()
        );
        let copied = target.load_session(id, Load::ALL).unwrap();
        assert_eq!(copied.info.findings, session.info.findings, "{engine}");
        assert_eq!(copied.configurations[0].runs[2], runs[2], "{engine}");

        // The session ends with two more runs; the target holds another session with the
        // id of the last run, so the step fails and stores neither run nor the end.
        source.add_run(record.id, &runs[3]).unwrap();
        source.add_run(record.id, &runs[4]).unwrap();
        source
            .finish_configuration(record.id, StopReason::MaxRuns, false, None)
            .unwrap();
        source
            .finish_session(
                id,
                SessionStatus::Completed,
                session.info.ended_at_ns.unwrap(),
            )
            .unwrap();
        let mut squatter = stored_session(500, &[9.0]);
        squatter.configurations[0].runs[0].id = runs[4].id;
        target
            .import_sessions(&[squatter.clone()], &BTreeMap::new())
            .unwrap();
        let error = copy_sessions(&source, target.as_mut(), |_| {}).unwrap_err();
        assert!(
            error.to_string().contains("already stored"),
            "{engine}: {error}"
        );
        assert_eq!(run_ids(target.as_ref()).len(), 3, "{engine}");
        let held = target.load_session(id, Load::ALL).unwrap();
        assert_eq!(held.info.ended_at_ns, None, "{engine}");
        assert_eq!(held.configurations[0].record.stop_reason, None, "{engine}");

        // With the obstacle gone, the next copy brings the rest and the end.
        target.delete_session(squatter.info.id).unwrap();
        let ended = SyncStep::Extended {
            id,
            runs: 2,
            running: false,
        };
        let report = copy_and_check(&source, target.as_mut(), ended, &session, engine);
        assert_eq!((report.added_runs, report.running), (2, 0), "{engine}");
        let present = SyncStep::Present { id };
        let report = copy_and_check(&source, target.as_mut(), present, &session, engine);
        assert_eq!(report.added_runs, 0, "{engine}");
    }
}

/// The central copy of a live session reads as the session does on its own machine: `running`
/// while the process recording it lives, `abandoned` once it is gone; a copy stored without
/// the process (by an earlier vernier) gets it with the next runs copied.
#[test]
fn the_copy_of_a_running_session_knows_the_process_that_records_it() {
    for db in databases("the_copy_of_a_running_session_knows_the_process_that_records_it") {
        let dir = tempfile::tempdir().unwrap();
        let source_path = dir.path().join("machine.db");
        let mut source = SqliteStore::open(&source_path).unwrap();
        let mut target =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        let engine = db.engine();
        let session = stored_session(1_000, &[1.0, 2.0, 3.0]);
        let id = session.info.id;
        let (info, record) = still_running(&session);
        let runs = &session.configurations[0].runs;
        source.begin_session(&info).unwrap();
        source.add_configuration(id, &record).unwrap();
        source.add_run(record.id, &runs[0]).unwrap();
        copy_to(&source, target.as_mut());
        let status = |store: &dyn Store| store.session_headers().unwrap()[0].status;
        assert_eq!(status(target.as_ref()), SessionStatus::Running, "{engine}");

        // A copy without the owner, as an earlier vernier stored it: abandoned here, until the
        // next step that adds runs carries the owner.
        db.execute(&format!(
            "UPDATE sessions SET owner_pid = NULL, owner_boot_id = NULL, \
             owner_start_ticks = NULL WHERE id = '{id}'"
        ));
        assert_eq!(
            status(target.as_ref()),
            SessionStatus::Abandoned,
            "{engine}"
        );
        source.add_run(record.id, &runs[1]).unwrap();
        let (_, steps) = copy_to(&source, target.as_mut());
        assert_eq!(
            steps,
            [SyncStep::Extended {
                id,
                runs: 1,
                running: true
            }],
            "{engine}"
        );
        assert_eq!(status(target.as_ref()), SessionStatus::Running, "{engine}");

        // The recording process is gone (a reaped child's pid): the source reads abandoned,
        // and so does a new copy of it.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let raw = rusqlite::Connection::open(&source_path).unwrap();
        raw.execute(
            "UPDATE sessions SET owner_pid = ?1, owner_start_ticks = NULL WHERE id = ?2",
            rusqlite::params![dead, id.to_string()],
        )
        .unwrap();
        drop(raw);
        assert_eq!(status(&source), SessionStatus::Abandoned);
        let mut other = open(&dir, "other.db");
        copy_to(&source, &mut other);
        assert_eq!(status(&other), SessionStatus::Abandoned);
    }
}

/// A sync step with nothing new learns it from how far each store has recorded the session,
/// kept with its configurations: it reads none of the session's runs (here, neither store
/// can), so its cost does not grow with the session. Runs stored later are counted, in
/// both stores, and the next step copies them.
#[test]
fn a_step_with_nothing_new_reads_no_run() {
    for db in databases("a_step_with_nothing_new_reads_no_run") {
        let dir = tempfile::tempdir().unwrap();
        let source_path = dir.path().join("machine.db");
        let mut source = SqliteStore::open(&source_path).unwrap();
        let mut target =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        let engine = db.engine();
        let session = stored_session(1_000, &[1.0, 2.0, 3.0]);
        let id = session.info.id;
        let (info, record) = still_running(&session);
        let runs = &session.configurations[0].runs;
        source.begin_session(&info).unwrap();
        source.add_configuration(id, &record).unwrap();
        source.add_run(record.id, &runs[0]).unwrap();
        source.add_run(record.id, &runs[1]).unwrap();
        copy_to(&source, target.as_mut());
        let mark = source.session_mark(id).unwrap();
        assert_eq!(target.session_mark(id).unwrap(), mark, "{engine}");
        let counted = mark.configurations[&record.id];
        assert_eq!(
            (counted.runs, counted.last_run_ended_ns),
            (2, Some(runs[1].ended_at_ns))
        );

        let hide = "ALTER TABLE runs RENAME TO runs_hidden";
        let show = "ALTER TABLE runs_hidden RENAME TO runs";
        let raw = rusqlite::Connection::open(&source_path).unwrap();
        raw.execute_batch(hide).unwrap();
        db.execute(hide);
        let (report, steps) = copy_to(&source, target.as_mut());
        assert_eq!(steps, [SyncStep::Running { id }], "{engine}");
        assert_eq!((report.extended, report.added_runs), (0, 0), "{engine}");
        raw.execute_batch(show).unwrap();
        db.execute(show);

        source.add_run(record.id, &runs[2]).unwrap();
        let (_, steps) = copy_to(&source, target.as_mut());
        assert_eq!(
            steps,
            [SyncStep::Extended {
                id,
                runs: 1,
                running: true
            }],
            "{engine}"
        );
        assert_eq!(
            target.session_mark(id).unwrap(),
            source.session_mark(id).unwrap(),
            "{engine}"
        );
        assert_eq!(
            target.session_mark(id).unwrap().configurations[&record.id].runs,
            3
        );
    }
}

/// A target that holds more of a running session than the source (the target is the older
/// copy's source) is not changed by it.
#[test]
fn a_target_ahead_of_the_source_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = open(&dir, "machine.db");
    let session = stored_session(1_000, &[1.0, 2.0]);
    let id = session.info.id;
    let (info, record) = still_running(&session);
    let runs = &session.configurations[0].runs;
    source.begin_session(&info).unwrap();
    source.add_configuration(id, &record).unwrap();
    source.add_run(record.id, &runs[0]).unwrap();
    let mut older = open(&dir, "older.db");
    copy_to(&source, &mut older);
    source.add_run(record.id, &runs[1]).unwrap();
    let mut newer = open(&dir, "newer.db");
    copy_to(&source, &mut newer);

    let (report, steps) = copy_to(&older, &mut newer);
    assert_eq!(steps, [SyncStep::Differs { id }]);
    assert_eq!(report.differs, 1);
    assert_eq!(
        newer.load_session(id, Load::ALL).unwrap().configurations[0]
            .runs
            .len(),
        2
    );
}

/// A load of chosen runs of a session reads those and nothing else, in the session's order,
/// with their values and histograms, on each engine: also when they take several queries
/// (more than 500 ids, the most one query names), and ids of another session's runs or of none take nothing.
#[test]
fn a_load_of_chosen_runs_holds_only_them() {
    for db in databases("a_load_of_chosen_runs_holds_only_them") {
        let engine = db.engine();
        let mut store =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        let values: Vec<f64> = (1..=1_010).map(f64::from).collect();
        let mut session = stored_session(1_000, &values);
        // A histogram costs megabytes to encode: some runs have one.
        let with_histograms = session.configurations[0].runs.iter_mut().step_by(100);
        for (run, i) in with_histograms.zip(0u64..) {
            let first = RunHistogram {
                quantity: "latency".into(),
                thread: 0,
                cpu: Some(1),
                count: 3,
                min_ns: 1_000 + i,
                max_ns: 3_000 + i,
                max_index: Some(2),
                sum_ns: 6_000 + 3 * i,
                overflows: 0,
                missed: 0,
                buckets: vec![(1_000 + i, 1), (2_000 + i, 1), (3_000 + i, 1)],
                // One run's thread was traced (`latency:trace=US`): the trace goes along.
                trace: (i == 0).then(|| {
                    Box::new(vernier_model::ThreadTrace {
                        threshold_ns: 2_000,
                        latency_ns: 3_000,
                        expiry_ns: 10_000,
                        wake_ns: 13_000,
                        tid: 42,
                        absent_events: vec!["irq_vectors/local_timer_entry".into()],
                        truncated: false,
                        events: vec![vernier_model::TraceEvent {
                            ts_ns: 12_000,
                            cpu: 1,
                            pid: 7,
                            comm: "spin thread".into(),
                            flags: "d..2.".into(),
                            name: "sched_switch".into(),
                            fields: "prev_comm=spin thread prev_pid=7".into(),
                        }],
                    })
                }),
            };
            // A second thread's, which a run holds after the first (quantity, thread).
            let second = RunHistogram {
                thread: 1,
                cpu: Some(0),
                max_ns: 4_000 + i,
                buckets: vec![(1_000 + i, 1), (2_000 + i, 1), (4_000 + i, 1)],
                trace: None,
                ..first.clone()
            };
            run.histograms = vec![first, second];
        }
        let other = stored_session(5_000, &[7.0]);
        store
            .import_sessions(&[session.clone(), other.clone()], &BTreeMap::new())
            .unwrap();
        let id = session.info.id;
        let all = store.load_session(id, Load::ALL).unwrap();
        assert_eq!(all, session, "{engine}");
        // The histograms without their buckets: every other fact, and the trace.
        let headers = Load {
            histograms: Histograms::Headers,
            ..Load::ALL
        };
        let mut expected = session.clone();
        expected
            .configurations
            .iter_mut()
            .flat_map(|c| &mut c.runs)
            .flat_map(|r| &mut r.histograms)
            .for_each(|h| h.buckets.clear());
        assert_eq!(
            store.load_session(id, headers).unwrap(),
            expected,
            "{engine}"
        );

        // All but the first three runs, and two places that hold none of this session's runs.
        let runs = &session.configurations[0].runs;
        let configuration = session.configurations[0].record.id;
        let mut chosen: BTreeSet<RunPlace> =
            runs[3..].iter().map(|r| r.place(configuration)).collect();
        let elsewhere = &other.configurations[0];
        chosen.insert(elsewhere.runs[0].place(elsewhere.record.id));
        chosen.insert(RunPlace {
            configuration,
            warmup: false,
            index: 1_000_000,
        });
        let mut expected = session.clone();
        expected.configurations[0].runs.drain(..3);
        assert_eq!(
            store.load_session_runs(id, Load::ALL, &chosen).unwrap(),
            expected,
            "{engine}"
        );

        let few = BTreeSet::from([runs[7].place(configuration), runs[2].place(configuration)]);
        let loaded = store.load_session_runs(id, Load::ALL, &few).unwrap();
        assert_eq!(loaded.info, session.info, "{engine}");
        assert_eq!(
            loaded.configurations[0].runs,
            [runs[2].clone(), runs[7].clone()],
            "{engine}"
        );
        assert_eq!(
            loaded.configurations[0].record, session.configurations[0].record,
            "{engine}"
        );
        let none = store
            .load_session_runs(id, Load::ALL, &BTreeSet::new())
            .unwrap();
        assert!(none.configurations[0].runs.is_empty(), "{engine}");
    }
}

/// A sync step of a session still being recorded reads of the source only the runs the target
/// lacks: with every run the target holds made unreadable in the source (its setup steps not
/// JSON), loading the whole session fails, and the step still adds the new runs.
///
/// Scale (a release build, SQLite to SQLite, one configuration whose runs carry five values
/// and a histogram of 60 buckets, on a 2-vCPU machine busy with other builds, load about 8.5):
/// a step adding 5 runs to a session of 20,000 took 4.1 to 6.5 s (10 steps) when it read the
/// whole session, and 24 to 53 ms (10 steps, alternated with those) reading only the new
/// runs, about 150 times less; what remains grows with the session only through the run ids
/// of both copies that `Store::session_progress` reads.
#[test]
fn a_sync_step_reads_only_the_runs_the_target_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("machine.db");
    let mut source = SqliteStore::open(&path).unwrap();
    let session = stored_session(1_000, &[1.0, 2.0, 3.0, 4.0, 5.0]);
    let id = session.info.id;
    let (info, record) = still_running(&session);
    let runs = &session.configurations[0].runs;
    source.begin_session(&info).unwrap();
    source.add_configuration(id, &record).unwrap();
    for run in &runs[..3] {
        source.add_run(record.id, run).unwrap();
    }
    let mut target = open(&dir, "central.db");
    copy_to(&source, &mut target);

    let raw = rusqlite::Connection::open(&path).unwrap();
    for run in &runs[..3] {
        let changed = raw
            .execute(
                "UPDATE runs SET setup_steps_stored = 'unreadable' \
                 WHERE key = (SELECT run_key FROM run_ids WHERE id = ?1)",
                [run.id.as_bytes().as_slice()],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    drop(raw);
    assert!(source.load_session(id, Load::ALL).is_err());

    source.add_run(record.id, &runs[3]).unwrap();
    source.add_run(record.id, &runs[4]).unwrap();
    let (report, steps) = copy_to(&source, &mut target);
    assert_eq!(
        steps,
        [SyncStep::Extended {
            id,
            runs: 2,
            running: true
        }]
    );
    assert_eq!(report.added_runs, 2);
    let held = target.load_session(id, Load::ALL).unwrap();
    assert_eq!(held.configurations[0].runs, *runs);
}

/// `Store::load_session_page` reads a session part by part: every run once, each page in
/// execution order, the last page saying that none follows; on both engines, with another
/// session's runs stored between (their keys interleave).
#[test]
fn pages_of_a_session_take_every_run_once() {
    for db in databases("pages_of_a_session_take_every_run_once") {
        let mut store =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        let session = stored_session(1_000, &values);
        let other = stored_session(2_000, &[5.0, 6.0]);
        store
            .import_sessions(&[session.clone(), other], &BTreeMap::new())
            .unwrap();
        let whole = store.load_session(session.info.id, Load::ALL).unwrap();
        let mut pages = Vec::new();
        let mut after = None;
        loop {
            let (page, next) = store
                .load_session_page(session.info.id, Load::ALL, after, 3)
                .unwrap();
            assert_eq!(page.info, whole.info, "{}", db.engine());
            pages.push(page.configurations[0].runs.clone());
            match next {
                Some(cursor) => after = Some(cursor),
                None => break,
            }
        }
        assert_eq!(
            pages.iter().map(Vec::len).collect::<Vec<_>>(),
            [3, 3, 3, 1],
            "{}",
            db.engine()
        );
        let read: Vec<_> = pages.concat();
        assert_eq!(read, whole.configurations[0].runs, "{}", db.engine());
        // An unknown session is an error, as for load_session.
        assert!(store
            .load_session_page(Uuid::new_v4(), Load::ALL, None, 3)
            .is_err());
    }
}

/// A session's profiled runs (`run --profile`) with it, on both engines.
#[test]
fn profiled_runs_are_copied_with_their_session() {
    for db in databases("profiled_runs_are_copied_with_their_session") {
        let dir = tempfile::tempdir().unwrap();
        let mut source = open(&dir, "machine.db");
        let mut session = stored_session(1_000, &[1.0, 2.0]);
        let stacks = vernier_model::FoldedStacks::from_folded(
            "hackbench;sender;kmem_cache_alloc_node_[k] 3003003\nhackbench;receiver 1001001\n",
        )
        .unwrap();
        session.configurations[0].profiles = (0..2)
            .map(|index| vernier_model::ProfileRecord {
                id: Uuid::from_u128(0x70 + u128::from(index)),
                index,
                event: "cpu-clock".into(),
                frequency_hz: 999,
                scope: vernier_model::ProfileScope::Process,
                started_at_ns: 10_000 + i64::from(index),
                ended_at_ns: 20_000,
                value: Some(1.5),
                stacks: stacks.clone(),
            })
            .collect();
        source
            .import_sessions(std::slice::from_ref(&session), &BTreeMap::new())
            .unwrap();
        let mut target = vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create)
            .unwrap_or_else(|e| panic!("{}: {e}", db.engine()));
        copy_to(&source, target.as_mut());
        let copied = target.load_session(session.info.id, Load::ALL).unwrap();
        assert_eq!(
            copied.configurations[0].profiles,
            session.configurations[0].profiles
        );
        // Deleted with their session.
        target.delete_session(session.info.id).unwrap();
        assert_eq!(db.count("profiles"), 0);
    }
}

/// `merge_sessions` copies as a sync does, part by part: a merge stopped midway (a trigger of
/// the target refuses the run of index 7,500 of the long session) keeps the parts it stored,
/// and merging the same inputs again stores the rest, each run once, to what a merge that was
/// never stopped stores, on both engines.
#[test]
fn a_merge_stopped_midway_is_resumed_to_what_an_uninterrupted_merge_stores() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = (open(&dir, "a.db"), open(&dir, "b.db"));
    let values: Vec<f64> = (1..=12_001).map(f64::from).collect();
    let long = stored_session(1_000, &values);
    let shared = stored_session(50_000, &[1.0, 2.0]);
    let own = stored_session(60_000, &[3.0]);
    a.import_sessions(&[long.clone(), shared.clone()], &BTreeMap::new())
        .unwrap();
    b.import_sessions(&[shared.clone(), own.clone()], &BTreeMap::new())
        .unwrap();
    let inputs: [&dyn Store; 2] = [&a, &b];
    let mut whole = open(&dir, "whole.db");
    let reports = merge_sessions(&inputs, &mut whole, |_, _| {}).unwrap();
    assert_eq!(
        reports
            .iter()
            .map(|r| (r.copied, r.runs, r.present))
            .collect::<Vec<_>>(),
        [(2, 12_003, 0), (1, 1, 1)]
    );
    for db in databases("a_merge_stopped_midway_is_resumed") {
        let engine = db.engine();
        let mut target =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        db.execute(stop_at_run_7500(engine));
        let error = merge_sessions(&inputs, target.as_mut(), |_, _| {}).unwrap_err();
        assert!(
            error.to_string().contains("stopped here"),
            "{engine}: {error}"
        );
        assert_eq!(db.count("runs"), 7_000, "{engine}");
        let header = target.session_headers().unwrap().remove(0);
        assert_eq!(
            (header.id, header.status, header.ended_at_ns),
            (long.info.id, SessionStatus::Abandoned, None),
            "{engine}"
        );
        db.execute(match engine {
            "sqlite" => "DROP TRIGGER stop_copy",
            _ => "DROP TRIGGER stop_copy ON runs; DROP FUNCTION stop_copy()",
        });

        let mut steps = Vec::new();
        let reports =
            merge_sessions(&inputs, target.as_mut(), |at, step| steps.push((at, step))).unwrap();
        assert_eq!(
            steps,
            [
                (
                    0,
                    SyncStep::Extended {
                        id: long.info.id,
                        runs: 5_001,
                        running: false
                    }
                ),
                (
                    0,
                    SyncStep::Copied {
                        id: shared.info.id,
                        runs: 2,
                        running: false
                    }
                ),
                (1, SyncStep::Present { id: shared.info.id }),
                (
                    1,
                    SyncStep::Copied {
                        id: own.info.id,
                        runs: 1,
                        running: false
                    }
                ),
            ],
            "{engine}"
        );
        assert_eq!(reports.len(), 2);
        assert_eq!(db.count("runs"), 12_004, "{engine}");
        assert_eq!(
            target.session_headers().unwrap(),
            whole.session_headers().unwrap(),
            "{engine}"
        );
        for id in [long.info.id, shared.info.id, own.info.id] {
            assert_eq!(
                target.load_session(id, Load::ALL).unwrap(),
                whole.load_session(id, Load::ALL).unwrap(),
                "{engine}"
            );
            assert_eq!(
                target.histogram_totals(id).unwrap(),
                whole.histogram_totals(id).unwrap(),
                "{engine}"
            );
        }
        // Merged again: nothing to add.
        let reports = merge_sessions(&inputs, target.as_mut(), |_, _| {}).unwrap();
        assert_eq!(
            reports
                .iter()
                .map(|r| (r.copied, r.extended, r.present))
                .collect::<Vec<_>>(),
            [(0, 0, 2), (0, 0, 2)],
            "{engine}"
        );
        assert_eq!(db.count("runs"), 12_004, "{engine}");
    }
}

/// A trigger of the target that refuses the run of index 7,500, as a server going away or a
/// Ctrl-C would stop a copy.
fn stop_at_run_7500(engine: &str) -> &'static str {
    match engine {
        "sqlite" => {
            // The index by the key: a generated column has no value yet before the insert.
            "CREATE TRIGGER stop_copy BEFORE INSERT ON runs \
             WHEN (NEW.key & 2147483647) = 7500 \
             BEGIN SELECT RAISE(ABORT, 'the copy is stopped here'); END"
        }
        _ => {
            "CREATE FUNCTION stop_copy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
             IF (NEW.key & 2147483647) = 7500 THEN RAISE EXCEPTION 'the copy is stopped here'; END IF; \
             RETURN NEW; END $$; CREATE TRIGGER stop_copy BEFORE INSERT ON runs \
             FOR EACH ROW EXECUTE FUNCTION stop_copy()"
        }
    }
}

/// Two copies of a session that differ are found before a merge stores anything, part by part
/// (a value of the twelfth part's run, a note), and named; a target that holds runs of a
/// session that the input lacks is refused too.
#[test]
fn a_merge_refuses_two_copies_of_a_session_that_differ_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f64> = (1..=12_001).map(f64::from).collect();
    let session = stored_session(1_000, &values);
    let mut changed_value = session.clone();
    changed_value.configurations[0].runs[11_000]
        .values
        .insert("time", 0.5);
    let mut noted = session.clone();
    noted.info.note = Some("changed".into());
    let mut shorter = session.clone();
    shorter.configurations[0].runs.pop();
    // As many runs, ending alike, one of another id at the same place: the parts hold the same
    // places, and the run's id is named.
    let mut renamed = session.clone();
    renamed.configurations[0].runs[5].id = Uuid::from_u128(5);
    let mut stores = Vec::new();
    for (name, s) in [
        ("a.db", &session),
        ("value.db", &changed_value),
        ("note.db", &noted),
        ("shorter.db", &shorter),
        ("renamed.db", &renamed),
    ] {
        let mut store = open(&dir, name);
        store
            .import_sessions(std::slice::from_ref(s), &BTreeMap::new())
            .unwrap();
        stores.push(store);
    }
    let mut target = open(&dir, "merged.db");
    for (other, field) in [
        (1, "configurations[0].runs[0].values"),
        (2, "note"),
        (3, "the runs of configuration"),
        (
            4,
            "run 00000000-0000-0000-0000-000000000005 is not in the stored session",
        ),
    ] {
        let error =
            merge_sessions(&[&stores[0], &stores[other]], &mut target, |_, _| {}).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("other content") && message.contains(field),
            "{message}"
        );
        assert!(ids(&target).is_empty(), "{message}");
    }
    // Held by the target: compared the same way.
    merge_sessions(&[&stores[0]], &mut target, |_, _| {}).unwrap();
    let error = merge_sessions(&[&stores[1]], &mut target, |_, _| {}).unwrap_err();
    assert!(error.to_string().contains("values"), "{error}");
    assert_eq!(
        target.load_session(session.info.id, Load::ALL).unwrap(),
        stores[0].load_session(session.info.id, Load::ALL).unwrap()
    );
}

/// A session read page by page (`Store::load_session_page`) brings its profiled runs once, with
/// the first page, on both engines.
#[test]
fn pages_of_a_session_bring_its_profiled_runs_once() {
    for db in databases("pages_of_a_session_bring_its_profiled_runs_once") {
        let mut store =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        let values: Vec<f64> = (1..=5).map(f64::from).collect();
        let mut session = stored_session(1_000, &values);
        let stacks = vernier_model::FoldedStacks::from_folded(
            "pipe;write;pipe_write_[k] 2002
",
        )
        .unwrap();
        session.configurations[0].profiles = (0..3)
            .map(|index| vernier_model::ProfileRecord {
                id: Uuid::from_u128(0x90 + u128::from(index)),
                index,
                event: "cpu-clock".into(),
                frequency_hz: 999,
                scope: vernier_model::ProfileScope::Process,
                started_at_ns: 10_000 + i64::from(index),
                ended_at_ns: 20_000,
                value: Some(1.5),
                stacks: stacks.clone(),
            })
            .collect();
        store
            .import_sessions(std::slice::from_ref(&session), &BTreeMap::new())
            .unwrap();
        let mut profiles = Vec::new();
        let mut after = None;
        loop {
            let (page, next) = store
                .load_session_page(session.info.id, Load::ALL, after, 2)
                .unwrap();
            profiles.push(page.configurations[0].profiles.clone());
            match next {
                Some(cursor) => after = Some(cursor),
                None => break,
            }
        }
        assert_eq!(profiles.len(), 3, "{}", db.engine());
        assert_eq!(
            profiles[0],
            session.configurations[0].profiles,
            "{}",
            db.engine()
        );
        assert!(profiles[1..].iter().all(Vec::is_empty), "{}", db.engine());
        // Without profiles asked for, none.
        let (page, _) = store
            .load_session_page(session.info.id, Load::DISTRIBUTIONS, None, 2)
            .unwrap();
        assert!(page.configurations[0].profiles.is_empty());
    }
}

/// A first copy of a long session goes in parts of 1,000 runs, each committed: a copy that
/// fails in the middle (here a trigger of the target refuses the run of index 7,500, as a
/// server going away would end it) keeps the parts it stored, the session reading as still
/// being recorded, and the next copy stores the rest and the end, every run once; the
/// histograms arrive as the source stores them, on both engines.
#[test]
fn a_first_copy_stopped_midway_keeps_its_parts_and_the_next_stores_the_rest_once() {
    for db in databases("a_first_copy_stopped_midway_keeps_its_parts") {
        let engine = db.engine();
        let dir = tempfile::tempdir().unwrap();
        let mut source = open(&dir, "machine.db");
        let values: Vec<f64> = (1..=12_001).map(f64::from).collect();
        let mut session = stored_session(1_000, &values);
        // One run in 500 has a histogram (encoding one costs milliseconds), one of them traced.
        for (run, i) in session.configurations[0]
            .runs
            .iter_mut()
            .step_by(500)
            .zip(0u64..)
        {
            run.histograms = vec![RunHistogram {
                quantity: "latency".into(),
                thread: 1,
                cpu: None,
                count: 2,
                min_ns: 900 + i,
                max_ns: 5_000 + i,
                max_index: None,
                sum_ns: 5_900 + 2 * i,
                overflows: 0,
                missed: 1,
                buckets: vec![(900 + i, 1), (5_000 + i, 1)],
                trace: (i == 3).then(|| {
                    Box::new(vernier_model::ThreadTrace {
                        threshold_ns: 4_000,
                        latency_ns: 5_000,
                        expiry_ns: 10_000,
                        wake_ns: 15_000,
                        tid: 9,
                        absent_events: Vec::new(),
                        truncated: false,
                        events: Vec::new(),
                    })
                }),
            }];
        }
        source
            .import_sessions(std::slice::from_ref(&session), &BTreeMap::new())
            .unwrap();
        let id = session.info.id;
        let mut target =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        db.execute(stop_at_run_7500(engine));
        let error = copy_sessions(&source, target.as_mut(), |_| {}).unwrap_err();
        assert!(
            error.to_string().contains("stopped here"),
            "{engine}: {error}"
        );
        // The first seven parts are there, the eighth is not; the session is not ended.
        assert_eq!(db.count("runs"), 7_000, "{engine}");
        assert_eq!(db.count("run_histograms"), 14, "{engine}");
        let header = target.session_headers().unwrap().remove(0);
        assert_eq!(header.id, id);
        assert_eq!(header.ended_at_ns, None, "{engine}");
        assert_ne!(header.status, SessionStatus::Completed, "{engine}");
        // It says that it is being copied, and how far.
        assert_eq!(
            header.copying,
            Some(vernier_store::CopyProgress {
                runs: 7_000,
                of: 12_001
            }),
            "{engine}"
        );

        db.execute(match engine {
            "sqlite" => "DROP TRIGGER stop_copy",
            _ => "DROP TRIGGER stop_copy ON runs; DROP FUNCTION stop_copy()",
        });
        let whole = source.load_session(id, Load::ALL).unwrap();
        let rest = SyncStep::Extended {
            id,
            runs: 5_001,
            running: false,
        };
        let report = copy_and_check(&source, target.as_mut(), rest, &whole, engine);
        assert_eq!(report.added_runs, 5_001);
        assert_eq!(
            target.session_headers().unwrap()[0].copying,
            None,
            "{engine}"
        );
        assert_eq!(db.count("runs"), 12_001, "{engine}");
        assert_eq!(db.count("run_histograms"), 25, "{engine}");
        assert_eq!(db.count("run_traces"), 1, "{engine}");
        // The kept merged histograms came with the parts: once the copy is complete, the
        // target holds the source's, which are those of the 25 measured runs' histograms.
        let totals = source.histogram_totals(id).unwrap();
        assert_eq!(target.histogram_totals(id).unwrap(), totals, "{engine}");
        assert_eq!(
            totals.iter().map(|t| (t.runs, t.count)).collect::<Vec<_>>(),
            [(25, 50)],
            "{engine}"
        );
        // Nothing more to do.
        let present = SyncStep::Present { id };
        let report = copy_and_check(&source, target.as_mut(), present, &whole, engine);
        assert_eq!((report.present, report.added_runs), (1, 0), "{engine}");
    }
}

/// Two syncs that continue one copy stopped midway at the same time (two machines' timers, or
/// a monitor's periodic sync beside a scheduled one) store every run once: each stores its
/// parts without looking the runs up, and the one that finds a run stored by the other
/// meanwhile (its place, the unique key of `runs`, refuses it) tries the part again, looking them up, on both engines.
#[test]
fn two_syncs_continuing_one_copy_at_once_store_every_run_once() {
    for db in databases("two_syncs_continuing_one_copy_at_once") {
        let engine = db.engine();
        let dir = tempfile::tempdir().unwrap();
        let mut source = open(&dir, "machine.db");
        let values: Vec<f64> = (1..=9_001).map(f64::from).collect();
        let session = stored_session(1_000, &values);
        source
            .import_sessions(std::slice::from_ref(&session), &BTreeMap::new())
            .unwrap();
        let id = session.info.id;
        let location = Location::parse(db.arg()).unwrap();
        let mut target = vernier_store::open(&location, Access::Create).unwrap();
        db.execute(&stop_at_run_7500(engine).replace("7500", "2500"));
        copy_sessions(&source, target.as_mut(), |_| {}).unwrap_err();
        db.execute(match engine {
            "sqlite" => "DROP TRIGGER stop_copy",
            _ => "DROP TRIGGER stop_copy ON runs; DROP FUNCTION stop_copy()",
        });
        assert_eq!(db.count("runs"), 2_000, "{engine}");
        drop(target);

        let source_path = dir.path().join("machine.db");
        let barrier = std::sync::Barrier::new(2);
        let added: Vec<usize> = std::thread::scope(|scope| {
            let copies: Vec<_> = (0..2)
                .map(|_| {
                    let (barrier, location, source_path) = (&barrier, &location, &source_path);
                    scope.spawn(move || {
                        let source = SqliteStore::open(source_path).unwrap();
                        let mut target = vernier_store::open(location, Access::Write).unwrap();
                        barrier.wait();
                        copy_sessions(&source, target.as_mut(), |_| {})
                            .unwrap()
                            .added_runs
                    })
                })
                .collect();
            copies.into_iter().map(|c| c.join().unwrap()).collect()
        });
        assert_eq!(db.count("runs"), 9_001, "{engine}");
        // Every run added once between the two.
        assert_eq!(added.iter().sum::<usize>(), 7_001, "{engine}: {added:?}");
        let target = vernier_store::open(&location, Access::Read).unwrap();
        assert_eq!(
            target.load_session(id, Load::ALL).unwrap(),
            source.load_session(id, Load::ALL).unwrap(),
            "{engine}"
        );
    }
}
