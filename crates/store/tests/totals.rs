//! The kept merged histograms of each configuration (`histogram_totals`, schema version 15):
//! updated with each run recorded, in its transaction, and carried by every copy, so that the
//! target of a sync or a merge holds the source's once the copy is complete.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::{Recorder, RunRecord, SessionStatus};
use vernier_store::{copy_sessions, Access, HistogramTotal, Location, SqliteStore, Store};
use vernier_testkit::{databases, latency_histogram_of, still_running, stored_session};

/// Run `i` with histograms of two threads whose samples depend on `i`.
fn with_histograms(mut run: RunRecord, i: u64) -> RunRecord {
    run.histograms = vec![
        latency_histogram_of(0, (0..50).map(|s| 2_000 + s * 7 + i * 13), 0),
        latency_histogram_of(1, (0..40 + i).map(|s| 3_000 + s * 11), i),
    ];
    run
}

/// The merge of the measured runs' histograms of every configuration of `session` in `store`
/// (read whole): what the kept totals must hold.
fn merged(store: &dyn Store, id: Uuid) -> Vec<HistogramTotal> {
    let session = store.load_session(id, vernier_store::Load::ALL).unwrap();
    let mut totals: BTreeMap<(usize, String, u32), HistogramTotal> = BTreeMap::new();
    for (position, c) in session.configurations.iter().enumerate() {
        for h in c
            .runs
            .iter()
            .filter(|r| !r.warmup)
            .flat_map(|r| &r.histograms)
        {
            let total = totals
                .entry((position, h.quantity.clone(), h.thread))
                .or_insert_with(|| HistogramTotal {
                    configuration: c.record.id,
                    quantity: h.quantity.clone(),
                    thread: h.thread,
                    runs: 0,
                    count: 0,
                    buckets: Vec::new(),
                });
            total.runs += 1;
            total.count += h.count;
            let mut all = vernier_model::RunHistogram {
                buckets: std::mem::take(&mut total.buckets),
                count: 1,
                ..h.clone()
            };
            all.merge(h);
            total.buckets = all.buckets;
        }
    }
    totals.into_values().collect()
}

#[test]
fn each_run_recorded_is_merged_into_the_totals_and_a_sync_carries_them() {
    for db in databases("each_run_recorded_is_merged_into_the_totals") {
        let engine = db.engine();
        let dir = tempfile::tempdir().unwrap();
        let mut source = SqliteStore::open(&dir.path().join("machine.db")).unwrap();
        let mut target =
            vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create).unwrap();
        let session = stored_session(1_000, &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let id = session.info.id;
        let (info, record) = still_running(&session);
        let runs: Vec<RunRecord> = session.configurations[0]
            .runs
            .iter()
            .cloned()
            .zip(0..)
            .map(|(run, i)| with_histograms(run, i))
            .collect();
        source.begin_session(&info).unwrap();
        source.add_configuration(id, &record).unwrap();
        // A warmup's histograms are stored, never merged.
        let warmup = RunRecord {
            id: Uuid::new_v4(),
            warmup: true,
            ..with_histograms(runs[0].clone(), 9)
        };
        source.add_run(record.id, &warmup).unwrap();
        for run in &runs[..3] {
            source.add_run(record.id, run).unwrap();
        }
        let kept = source.histogram_totals(id).unwrap();
        assert_eq!(kept, merged(&source, id));
        assert_eq!(
            kept.iter().map(|t| (t.thread, t.runs)).collect::<Vec<_>>(),
            [(0, 3), (1, 3)]
        );

        // Copied while running, then followed: the target holds the source's totals after
        // each step.
        copy_sessions(&source, target.as_mut(), |_| {}).unwrap();
        assert_eq!(target.histogram_totals(id).unwrap(), kept, "{engine}");
        for run in &runs[3..] {
            source.add_run(record.id, run).unwrap();
        }
        source
            .finish_session(id, SessionStatus::Completed, 9_000)
            .unwrap();
        copy_sessions(&source, target.as_mut(), |_| {}).unwrap();
        let kept = source.histogram_totals(id).unwrap();
        assert_eq!(kept, merged(&source, id));
        assert_eq!(kept[0].runs, 5);
        assert_eq!(target.histogram_totals(id).unwrap(), kept, "{engine}");

        // A merge carries them too.
        let mut merged_file = SqliteStore::open(&dir.path().join("merged.db")).unwrap();
        vernier_store::merge_sessions(&[&source], &mut merged_file, |_, _| {}).unwrap();
        assert_eq!(merged_file.histogram_totals(id).unwrap(), kept);
    }
}
