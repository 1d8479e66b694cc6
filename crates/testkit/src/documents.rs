//! Parts of the documents that `vernier import` reads, for the tests that import sessions
//! written by hand.

use serde_json::{json, Value};

/// The runs of one configuration of an export document (`vernier-export`, version 1): a
/// measured run per value of `values` as the metric `runtime`, run `i` with the id `id(i)`,
/// number `i` (its count of preceding executions too), in round 0, from `1000 + i` to
/// `2000 + i` ns, with no resource usage and no CPU time of others.
pub fn export_runs(values: &[f64], id: impl Fn(usize) -> String) -> Vec<Value> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            json!({
                "id": id(i),
                "index": i, "warmup": false, "round": 0, "preceding_executions": i,
                "started_at_ns": 1000 + i, "ended_at_ns": 2000 + i,
                "values": {"runtime": v},
                "rusage": {"user_cpu_ns": 0, "system_cpu_ns": 0, "voluntary_cs": 0,
                           "involuntary_cs": 0, "max_rss_bytes": 0},
                "foreign_cpu_ns": 0, "controller_cpu_ns": 0
            })
        })
        .collect()
}
