//! Calibrations in the store (both engines): round trip, every row of a fingerprint oldest first,
//! all-or-nothing writes.

#![allow(clippy::unwrap_used)]

use uuid::Uuid;
use vernier_model::{Calibration, OptionValue, Options};
use vernier_store::{Access, Location, Store, StoreError};
use vernier_testkit::{databases, TestDatabase};

/// The store of a new database of `db`'s engine.
fn open(db: &TestDatabase) -> Box<dyn Store> {
    vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create)
        .unwrap_or_else(|e| panic!("{}: {e}", db.engine()))
}

fn calibration(fingerprint: &str, loops: u64, created_at_ns: i64, between_sd: f64) -> Calibration {
    let mut options = Options::default();
    options.0.insert("loops".into(), OptionValue::UInt(loops));
    Calibration {
        id: Uuid::new_v4(),
        created_at_ns,
        fingerprint: fingerprint.into(),
        benchmark: "pipe".into(),
        options,
        metric: "round_trip".into(),
        sessions: 5,
        runs: 50,
        session_sd: 0.02,
        within_sd: 0.01,
        between_sd,
        df: 4.0,
        session_ids: vec![Uuid::new_v4(), Uuid::new_v4()],
    }
}

#[test]
fn every_calibration_of_the_fingerprints_is_returned_oldest_first() {
    for db in databases("every_calibration_of_the_fingerprints_is_returned_oldest_first") {
        let mut store = open(&db);
        let old = calibration("f1", 100, 1, 0.03);
        let new = calibration("f1", 100, 2, 0.01);
        let other_config = calibration("f1", 200, 1, 0.05);
        let other_env = calibration("f2", 100, 3, 0.07);
        store
            .add_calibrations(&[
                new.clone(),
                old.clone(),
                other_config.clone(),
                other_env.clone(),
            ])
            .unwrap();
        drop(store);

        let store = vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Read).unwrap();
        let got = store.calibrations(&["f1".to_string()]).unwrap();
        assert_eq!(got, vec![old.clone(), new.clone(), other_config.clone()]);
        let got = store
            .calibrations(&["f2".to_string(), "f1".to_string(), "f2".to_string()])
            .unwrap();
        assert_eq!(got, vec![other_env, old, new, other_config]);
        assert!(store
            .calibrations(&["none".to_string()])
            .unwrap()
            .is_empty());
    }
}

#[test]
fn invalid_calibrations_store_nothing() {
    for db in databases("invalid_calibrations_store_nothing") {
        let mut store = open(&db);
        let good = calibration("f", 1, 1, 0.01);
        let bad = calibration("f", 2, 1, f64::NAN);
        assert!(matches!(
            store.add_calibrations(&[good.clone(), bad]),
            Err(StoreError::Invalid(_))
        ));
        // Two sessions at least (the table's CHECK): the whole write is rolled back.
        let mut one_session = calibration("f", 3, 1, 0.01);
        one_session.sessions = 1;
        assert!(store.add_calibrations(&[good, one_session]).is_err());
        assert!(store.calibrations(&["f".to_string()]).unwrap().is_empty());
    }
}
