//! `Store::import_sessions` on both engines: whole sessions in one transaction, idempotent, all
//! or nothing.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use vernier_model::{RunRecord, StoredSession};
use vernier_store::{Access, ImportReport, Load, Location, Store, StoreError};
use vernier_testkit::{databases, stored_session, TestDatabase};

/// The store of a new database of `db`'s engine.
fn open(db: &TestDatabase) -> Box<dyn Store> {
    vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create)
        .unwrap_or_else(|e| panic!("{}: {e}", db.engine()))
}

/// A session of the shared builder, tagged `kernel=A`, so that tags round-trip too.
fn stored(values: &[f64]) -> StoredSession {
    let mut session = stored_session(1_000, values);
    session
        .info
        .tags
        .insert("kernel".to_string(), "A".to_string());
    session
}

#[test]
fn import_round_trips_and_is_idempotent() {
    for db in databases("import_round_trips_and_is_idempotent") {
        let mut store = open(&db);
        let a = stored(&[1.0, 2.0, 3.0]);
        let b = stored(&[4.0]);
        let report = store
            .import_sessions(&[a.clone(), b.clone()], &BTreeMap::new())
            .unwrap();
        assert_eq!(
            report,
            ImportReport {
                imported: 2,
                skipped: 0
            }
        );
        assert_eq!(store.load_session(a.info.id, Load::ALL).unwrap(), a);
        assert_eq!(store.load_session(b.info.id, Load::ALL).unwrap(), b);
        // Twice: nothing new, the sessions are reported as skipped.
        let report = store
            .import_sessions(&[a.clone(), b.clone()], &BTreeMap::new())
            .unwrap();
        assert_eq!(
            report,
            ImportReport {
                imported: 0,
                skipped: 2
            }
        );
        // One id twice in one batch is an error, not a skip.
        let err = store
            .import_sessions(&[b.clone(), b.clone()], &BTreeMap::new())
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid(m) if m.contains("more than once")),
            "{err}"
        );
        assert_eq!(store.sessions().unwrap().len(), 2);
        // Ordinary writes work again after an import (no transaction left open).
        let c = stored(&[5.0]);
        store.begin_session(&c.info).unwrap();
        assert_eq!(store.sessions().unwrap().len(), 3);
    }
}

#[test]
fn a_failing_import_stores_nothing() {
    for db in databases("a_failing_import_stores_nothing") {
        let mut store = open(&db);
        let good = stored(&[1.0, 2.0]);
        let bad = stored(&[1.0, f64::NAN]);
        let err = store
            .import_sessions(&[good.clone(), bad], &BTreeMap::new())
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        assert!(store.sessions().unwrap().is_empty());
        // The store is usable afterwards and the good session imports alone.
        let report = store.import_sessions(&[good], &BTreeMap::new()).unwrap();
        assert_eq!(report.imported, 1);
    }
}

#[test]
fn a_stored_id_with_other_content_is_a_conflict() {
    for db in databases("a_stored_id_with_other_content_is_a_conflict") {
        let mut store = open(&db);
        let a = stored(&[1.0, 2.0, 3.0]);
        store
            .import_sessions(std::slice::from_ref(&a), &BTreeMap::new())
            .unwrap();
        // One value one ulp away: the import is refused and names the field.
        let mut changed = a.clone();
        let v = changed.configurations[0].runs[2]
            .values
            .get_mut("time")
            .unwrap();
        *v = f64::from_bits(v.to_bits() + 1);
        let fresh = stored(&[4.0]);
        let err = store
            .import_sessions(&[fresh.clone(), changed], &BTreeMap::new())
            .unwrap_err();
        match &err {
            StoreError::Conflict(m) => {
                assert!(m.contains(&a.info.id.to_string()), "{m}");
                assert!(m.contains("configurations[0].runs[2].values"), "{m}");
            }
            other => panic!("{other}"),
        }
        // Nothing of that import was stored, the session before it included.
        assert_eq!(store.sessions().unwrap().len(), 1);
        // Another note: the field is named too.
        let mut noted = a.clone();
        noted.info.note = Some("other".into());
        let err = store
            .import_sessions(&[noted], &BTreeMap::new())
            .unwrap_err();
        assert!(err.to_string().contains("first difference: note"), "{err}");
        // The same runs in another order are the same content.
        let mut reordered = a.clone();
        reordered.configurations[0].runs.reverse();
        let report = store
            .import_sessions(&[reordered], &BTreeMap::new())
            .unwrap();
        assert_eq!(report.skipped, 1);
    }
}

/// `session` with, in its configuration, only the runs `from..to`.
fn part(session: &StoredSession, from: usize, to: usize) -> StoredSession {
    let mut part = session.clone();
    part.configurations[0].runs = session.configurations[0].runs[from..to].to_vec();
    part
}

/// Imports `session` again as a streamed import gives it: its first `first` runs with the
/// session, then the runs of each of `parts`; the report, or the error of any step.
fn import_in_parts(
    store: &mut dyn Store,
    session: &StoredSession,
    first: usize,
    parts: &[StoredSession],
) -> Result<ImportReport, StoreError> {
    let mut import = store.importer(0)?;
    import.session(&part(session, 0, first))?;
    for p in parts {
        assert_eq!(
            import.add_runs(p)?,
            0,
            "a stored session's runs are compared, not stored"
        );
    }
    import.commit()
}

#[test]
fn a_stored_session_given_in_parts_is_compared_part_by_part() {
    for db in databases("a_stored_session_given_in_parts_is_compared_part_by_part") {
        let mut store = open(&db);
        let a = stored(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        store
            .import_sessions(std::slice::from_ref(&a), &BTreeMap::new())
            .unwrap();
        // The same runs, two with the session and three in parts: skipped, nothing stored.
        let report =
            import_in_parts(store.as_mut(), &a, 2, &[part(&a, 2, 3), part(&a, 3, 5)]).unwrap();
        assert_eq!(
            report,
            ImportReport {
                imported: 0,
                skipped: 1
            }
        );
        assert_eq!(store.load_session(a.info.id, Load::ALL).unwrap(), a);
        // A value that differs in a later part is named by its index in the configuration.
        let mut changed = a.clone();
        *changed.configurations[0].runs[3]
            .values
            .get_mut("time")
            .unwrap() = 4.5;
        let err =
            import_in_parts(store.as_mut(), &changed, 2, &[part(&changed, 2, 5)]).unwrap_err();
        assert!(
            matches!(&err, StoreError::Conflict(m) if m.contains("configurations[0].runs[3].values")),
            "{err}"
        );
        // Fewer runs than are stored: refused when the session has been given whole.
        let err = import_in_parts(store.as_mut(), &a, 2, &[part(&a, 2, 4)]).unwrap_err();
        assert!(
            matches!(&err, StoreError::Conflict(m)
                if m.contains("configurations[0].runs (the stored session has 5, the file 4)")),
            "{err}"
        );
        // A run that is not stored.
        let mut longer = stored(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        longer.info = a.info.clone();
        longer.configurations[0].record = a.configurations[0].record.clone();
        longer.configurations[0].runs[..5].clone_from_slice(&a.configurations[0].runs);
        let err = import_in_parts(store.as_mut(), &longer, 5, &[part(&longer, 5, 6)]).unwrap_err();
        assert!(
            matches!(&err, StoreError::Conflict(m)
                if m.contains("configurations[0].runs[5] (run") && m.contains("is not in the stored session")),
            "{err}"
        );
        assert_eq!(store.load_session(a.info.id, Load::ALL).unwrap(), a);
    }
}

#[test]
fn a_run_id_of_another_session_is_a_conflict() {
    for db in databases("a_run_id_of_another_session_is_a_conflict") {
        let mut store = open(&db);
        let a = stored(&[1.0, 2.0]);
        store
            .import_sessions(std::slice::from_ref(&a), &BTreeMap::new())
            .unwrap();
        let mut b = stored(&[3.0]);
        b.configurations[0].runs[0].id = a.configurations[0].runs[1].id;
        let err = store.import_sessions(&[b], &BTreeMap::new()).unwrap_err();
        assert!(
            matches!(&err, StoreError::Conflict(m) if m.contains("already stored in another session")),
            "{err}"
        );
        assert_eq!(store.sessions().unwrap().len(), 1);
    }
}

/// A new session given in parts (an export read as a stream): its runs are stored part by
/// part, and a run whose place or id an earlier part gave is refused by the database's keys,
/// which no check of one part alone sees; nothing of the import is kept.
#[test]
fn a_run_repeated_in_a_later_part_is_a_conflict() {
    for db in databases("a_run_repeated_in_a_later_part_is_a_conflict") {
        let mut store = open(&db);
        let a = stored(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let mut import = store.importer(0).unwrap();
        import.session(&part(&a, 0, 0)).unwrap();
        assert_eq!(import.add_runs(&part(&a, 0, 3)).unwrap(), 3);
        assert_eq!(import.add_runs(&part(&a, 3, 5)).unwrap(), 2);
        import.commit().unwrap();
        assert_eq!(store.load_session(a.info.id, Load::ALL).unwrap(), a);

        let b = stored(&[1.0, 2.0, 3.0]);
        for repeated in [b.configurations[0].runs[0].clone(), {
            // Another id in the same place.
            let mut run = b.configurations[0].runs[1].clone();
            run.id = uuid::Uuid::from_u128(7);
            run
        }] {
            let mut import = store.importer(0).unwrap();
            import.session(&part(&b, 0, 0)).unwrap();
            import.add_runs(&part(&b, 0, 2)).unwrap();
            let mut later = part(&b, 2, 3);
            later.configurations[0].runs.push(repeated);
            let err = import.add_runs(&later).unwrap_err();
            assert!(
                matches!(&err, StoreError::Conflict(m) if m.contains("stored already")),
                "{err}"
            );
        }
        assert_eq!(store.sessions().unwrap().len(), 1);
    }
}

#[test]
fn invalid_sessions_are_refused_before_anything_is_stored() {
    for db in databases("invalid_sessions_are_refused_before_anything_is_stored") {
        let mut store = open(&db);
        // What the message names, and the change.
        type Case = (&'static str, fn(&mut StoredSession));
        let cases: Vec<Case> = vec![
            ("values.time", |s| {
                s.configurations[0].runs[0].values.insert("time", 0.0);
            }),
            ("lacks the primary metric", |s| {
                let v = s.configurations[0].runs[0].values.remove("time").unwrap();
                s.configurations[0].runs[0].values.insert("other", v);
            }),
            ("'values' is empty", |s| {
                s.configurations[0].runs[0].values.clear()
            }),
            ("started_at_ns", |s| {
                s.configurations[0].runs[0].started_at_ns = -1
            }),
            ("before 'started_at_ns'", |s| {
                s.configurations[0].runs[0].ended_at_ns = 10
            }),
            ("started_at_ns", |s| s.info.started_at_ns = -5),
            ("settings.max_time_s", |s| s.info.settings.max_time_s = -1.0),
            ("settings.target", |s| s.info.settings.target = -0.5),
            ("rusage.max_rss_bytes", |s| {
                s.configurations[0].runs[0].rusage.max_rss_bytes = -1
            }),
        ];
        for (field, mutate) in cases {
            let mut s = stored(&[1.0, 2.0]);
            mutate(&mut s);
            let err = store
                .import_sessions(&[s.clone()], &BTreeMap::new())
                .unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, StoreError::Invalid(_)), "{text}");
            assert!(text.contains(field), "{field}: {text}");
            assert!(text.contains(&s.info.id.to_string()), "{text}");
            assert!(!text.contains('\n'), "{text}");
        }
        assert!(store.sessions().unwrap().is_empty());
    }
}

#[test]
fn kernel_configs_are_stored_under_their_own_hash() {
    for db in databases("kernel_configs_are_stored_under_their_own_hash") {
        let mut store = open(&db);
        let text = "CONFIG_HZ=1000\n".to_string();
        let sha = vernier_model::validate::sha256_hex(&text);
        let wrong = BTreeMap::from([("00".repeat(32), text.clone())]);
        let err = store
            .import_sessions(&[stored(&[1.0])], &wrong)
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        assert_eq!(store.kernel_config(&"00".repeat(32)).unwrap(), None);
        let right = BTreeMap::from([(sha.clone(), text.clone())]);
        store.import_sessions(&[stored(&[1.0])], &right).unwrap();
        assert_eq!(store.kernel_config(&sha).unwrap(), Some(text));
    }
}

#[test]
fn text_holding_nul_is_refused_alike_by_both_engines() {
    for db in databases("text_holding_nul_is_refused_alike_by_both_engines") {
        let mut store = open(&db);
        let mut session = stored(&[1.0, 2.0]);
        // What a failing tool might have written on its standard error.
        session.configurations[0].record.error = Some("disk\0on fire".into());
        match store.import_sessions(&[session], &BTreeMap::new()) {
            Err(StoreError::Invalid(message)) => assert!(
                message.contains(
                    "field 'error' ('disk\\0on fire') contains the control character NUL"
                ),
                "{}: {message}",
                db.engine()
            ),
            other => panic!("{}: {other:?}", db.engine()),
        }
        let text = "CONFIG_A=y\n\0".to_string();
        let configs = BTreeMap::from([(vernier_model::validate::sha256_hex(&text), text)]);
        match store.import_sessions(&[stored(&[1.0])], &configs) {
            Err(StoreError::Invalid(message)) => {
                assert!(message.contains("control character NUL"), "{message}")
            }
            other => panic!("{}: {other:?}", db.engine()),
        }
        assert_eq!(db.count("sessions"), 0);
    }
}

/// The runs of `session`'s first configuration as `Store::for_each_run_page` hands them on,
/// page by page.
fn pages_of(store: &dyn Store, session: &StoredSession, limit: usize) -> Vec<Vec<RunRecord>> {
    let mut pages = Vec::new();
    store
        .for_each_run_page(
            session.info.id,
            session.configurations[0].record.id,
            Load::ALL,
            limit,
            &mut |page| {
                pages.push(page);
                Ok(())
            },
        )
        .unwrap();
    pages
}

/// `Store::for_each_run_page` (what `export` writes) gives a configuration's runs in execution
/// order, as `load_session` does, in pages of at most the limit: warmups and measured runs are
/// two ranges of keys merged by start time, here interleaved, with a secondary metric. A
/// configuration whose runs of one kind do not start in the order of their indexes (an import
/// may give any times) comes whole in one page; an unknown configuration is an error.
#[test]
fn runs_come_page_by_page_in_execution_order() {
    for db in databases("runs_come_page_by_page_in_execution_order") {
        let mut store = open(&db);
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        let mut session = stored(&values);
        // W M W M M W M M M M, each kind numbered in its own order.
        let warmups = [0, 2, 5];
        let (mut warmup, mut measured) = (0, 0);
        for (at, run) in session.configurations[0].runs.iter_mut().enumerate() {
            run.warmup = warmups.contains(&at);
            let kind = if run.warmup {
                &mut warmup
            } else {
                &mut measured
            };
            run.index = *kind;
            *kind += 1;
            run.values.insert("rss", at as f64 * 0.5);
        }
        session.configurations[0].record.secondary_metrics = vec![vernier_model::MetricInfo {
            name: "rss".into(),
            unit: "B".into(),
            higher_is_better: false,
        }];
        // Another session's runs between (their keys are ranges of their own).
        let other = stored(&[5.0, 6.0]);
        store
            .import_sessions(&[session.clone(), other], &BTreeMap::new())
            .unwrap();
        let whole = store.load_session(session.info.id, Load::ALL).unwrap();
        assert_eq!(whole.configurations[0].runs, session.configurations[0].runs);
        let pages = pages_of(store.as_ref(), &session, 3);
        assert_eq!(
            pages.iter().map(Vec::len).collect::<Vec<_>>(),
            [3, 3, 3, 1],
            "{}",
            db.engine()
        );
        assert_eq!(
            pages.concat(),
            whole.configurations[0].runs,
            "{}",
            db.engine()
        );

        // Measured run 1 started before measured run 0.
        let mut shuffled = stored(&[1.0, 2.0, 3.0, 4.0]);
        let runs = &mut shuffled.configurations[0].runs;
        runs[1].started_at_ns = runs[0].started_at_ns - 10;
        store
            .import_sessions(&[shuffled.clone()], &BTreeMap::new())
            .unwrap();
        let whole = store.load_session(shuffled.info.id, Load::ALL).unwrap();
        let pages = pages_of(store.as_ref(), &shuffled, 3);
        assert_eq!(pages.len(), 1, "{}", db.engine());
        assert_eq!(pages[0], whole.configurations[0].runs, "{}", db.engine());
        assert_eq!(pages[0][0].index, 1, "{}", db.engine());

        let unknown = store.for_each_run_page(
            session.info.id,
            uuid::Uuid::new_v4(),
            Load::ALL,
            3,
            &mut |_| Ok(()),
        );
        assert!(
            matches!(unknown, Err(StoreError::Unknown { .. })),
            "{unknown:?}"
        );
    }
}
