//! Bisections in the store (both engines): round trip, replacement by id, deletion.

#![allow(clippy::unwrap_used)]

use uuid::Uuid;
use vernier_model::{BisectTerms, Bisection, SessionLimits};
use vernier_store::{Access, Location, Store};
use vernier_testkit::{databases, TestDatabase};

fn open(db: &TestDatabase) -> Box<dyn Store> {
    vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create)
        .unwrap_or_else(|e| panic!("{}: {e}", db.engine()))
}

fn bisection(created_at_ns: i64) -> Bisection {
    Bisection {
        id: Uuid::new_v4(),
        created_at_ns,
        repo: "/src/app".into(),
        commits: vec!["a".repeat(40), "b".repeat(40), "c".repeat(40)],
        terms: BisectTerms {
            build: Some("make -j4".into()),
            boot: None,
            kernel_release: None,
            specs: vec!["command:cmd=./app:shell=none".into()],
            metric: Some("user_time".into()),
            limits: SessionLimits {
                warmup: Some(1),
                min_runs: None,
                max_runs: Some(10),
                max_time_s: None,
            },
            threshold: None,
            budget_sessions: 40,
            budget_s: Some(600.0),
            commit_sessions: 6,
        },
        unbuildable: Vec::new(),
        build_s: 0.0,
        kernel_boot: None,
        boot_failures: Vec::new(),
    }
}

#[test]
fn bisections_round_trip_are_replaced_by_id_and_deleted() {
    for db in databases("bisections_round_trip_are_replaced_by_id_and_deleted") {
        let mut store = open(&db);
        assert!(store.bisections().unwrap().is_empty(), "{}", db.engine());
        let (first, mut second) = (bisection(2), bisection(1));
        store.put_bisection(&first).unwrap();
        store.put_bisection(&second).unwrap();
        assert_eq!(store.bisections().unwrap(), [second.clone(), first.clone()]);
        second.unbuildable.push("b".repeat(40));
        second.build_s = 12.5;
        store.put_bisection(&second).unwrap();
        assert_eq!(store.bisections().unwrap(), [second.clone(), first.clone()]);
        assert!(store.delete_bisection(second.id).unwrap());
        assert!(!store.delete_bisection(second.id).unwrap());
        assert_eq!(store.bisections().unwrap(), [first]);
    }
}
