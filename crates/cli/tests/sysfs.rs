//! `vernier run sysfs` on a fixture directory of plain files: the machine's tests cannot load
//! a kernel module (contrib/kbench-module), so `run` is a file whose figures do not change.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use vernier_testkit::vernier;

#[test]
fn sysfs_writes_parameters_reads_run_and_stores_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("kbench");
    std::fs::create_dir(&module).unwrap();
    std::fs::write(
        module.join("run"),
        "min=72 max=33364 count=100000 p50=112 p90=142 p95=154 p99=160 mad=6 overhead=20\n",
    )
    .unwrap();
    std::fs::write(module.join("loop_count"), "5000\n").unwrap();
    let db = dir.path().join("results.db");
    let spec = format!("sysfs:path={}:loop_count=1000,2000", module.display());
    vernier(&db)
        .args([
            "run",
            &spec,
            "--warmup",
            "0",
            "--max-runs",
            "2",
            "--min-runs",
            "2",
        ])
        .args(["--monitor", "none", "--quiet"])
        .assert()
        .success();
    let out = vernier(&db).args(["export", "latest"]).output().unwrap();
    let export: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let configurations = export["sessions"][0]["configurations"].as_array().unwrap();
    assert_eq!(configurations.len(), 2);
    for (c, loops) in configurations.iter().zip(["1000", "2000"]) {
        assert_eq!(c["options"]["loop_count"], loops);
        assert_eq!(c["metric"]["name"], "p50");
        assert_eq!(c["metric"]["unit"], "cycles");
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0]["values"]["p50"], 112.0);
        assert_eq!(runs[0]["values"]["overhead"], 20.0);
    }
    // The parameter is back at the value it had.
    assert_eq!(
        std::fs::read_to_string(module.join("loop_count")).unwrap(),
        "5000\n"
    );
    // A parameter the module does not have is refused before anything runs.
    let spec = format!("sysfs:path={}:loops=1", module.display());
    let out = vernier(&db).args(["run", &spec]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("has no parameter 'loops'; its attributes: loop_count"),
        "{stderr}"
    );
}
