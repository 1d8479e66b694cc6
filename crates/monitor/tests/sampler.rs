//! The sampler on the real machine: default monitors, perf counters of a real child, and a
//! monitor whose file disappears mid-run.
#![allow(clippy::print_stderr, clippy::expect_used)] // test helpers say what they skip and expect their own set-up
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use vernier_monitor::monitors::StatMonitor;
use vernier_monitor::{
    default_monitors, parse_monitor_list, Monitor, MonitorSet, RunSampler, SeriesKind,
};
use vernier_sys::Roots;

/// A child that waits for a line on stdin (so the counters exist before it works), then
/// spins and forks a few processes.
fn held_child() -> std::process::Child {
    Command::new("/bin/sh")
        .arg("-c")
        .arg("read go; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; /bin/true; /bin/true; /bin/true")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn /bin/sh")
}

fn release_and_wait(child: &mut std::process::Child) {
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(b"go\n").expect("release child");
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

#[test]
fn default_monitors_record_a_real_run() {
    let mut child = held_child();
    let pid = child.id() as i32;
    // This run lasts a few milliseconds: `interrupts` samples it only without its min-run
    // (`a_monitor_samples_no_run_of_a_configuration_shorter_than_its_min_run`).
    let specs = parse_monitor_list("default,interrupts:min-run=0").unwrap();
    assert_eq!(specs.len(), default_monitors().len());
    let sampler = RunSampler::start(&specs, &Roots::real(), pid).unwrap();
    release_and_wait(&mut child);
    let data = sampler.finish();

    assert!(data.failures.is_empty(), "{:?}", data.failures);
    assert!(data.rounds >= 2);
    for spec in specs {
        let name = spec.name.as_str();
        let series: Vec<_> = data.series.iter().filter(|s| s.monitor == name).collect();
        if data.unsupported.contains_key(name) {
            assert!(series.is_empty(), "{name} unsupported yet recorded");
            continue;
        }
        assert!(!series.is_empty(), "{name}: no series");
        for s in series {
            assert!(
                s.points.len() >= 2,
                "{}: {} points",
                s.metric,
                s.points.len()
            );
            assert!(data.summary.contains_key(&s.key()), "{}", s.key());
        }
    }
    // Present on any Linux this runs on.
    for must in ["stat", "meminfo", "vmstat", "interrupts", "perf"] {
        assert!(
            !data.unsupported.contains_key(must),
            "{must}: {:?}",
            data.unsupported
        );
    }
    // The child forked at least four processes (sh, three /bin/true).
    assert!(data.summary["stat.processes"] >= 3.0);
    assert!(data.summary["meminfo.MemAvailable_bytes"] > 0.0);
    assert_eq!(data.find("stat", "ctxt").unwrap().kind, SeriesKind::Counter);
    assert!(data.summary["interrupts.irq_total"] >= 0.0);
    // The interrupts monitor keeps the top 5 of each group plus the totals.
    let irq = data
        .series
        .iter()
        .filter(|s| s.monitor == "interrupts" && s.metric.starts_with("irq."))
        .count();
    assert!(irq <= 5, "{irq} irq series kept");
    let json = serde_json::to_string(&data).unwrap();
    assert!(json.contains("\"sampler_priority\""));
}

#[test]
fn perf_counts_the_child_and_its_forks() {
    // Counting another task with its kernel side needs root or perf_event_paranoid <= 1.
    if let Err(e) = vernier_monitor::perf::PerfCounter::open(&vernier_monitor::perf::COUNTERS[3], 0)
    {
        eprintln!("skipped: perf events are not permitted here: {e}");
        return;
    }
    let mut child = held_child();
    let pid = child.id() as i32;
    let specs = parse_monitor_list("perf").unwrap();
    let sampler = RunSampler::start(&specs, &Roots::real(), pid).unwrap();
    release_and_wait(&mut child);
    let data = sampler.finish();

    assert!(data.failures.is_empty(), "{:?}", data.failures);
    for metric in ["task_clock_ns", "page_faults", "context_switches"] {
        let v = data.summary[&format!("perf.{metric}")];
        assert!(v > 0.0, "perf.{metric} = {v}");
    }
    assert!(data.summary.contains_key("perf.cpu_migrations"));
    // exec and the forked /bin/true processes fault in many pages.
    assert!(data.summary["perf.page_faults"] > 100.0);
    // Hardware counters: recorded where the PMU exists, unsupported otherwise (as in a VM).
    for hw in ["cycles", "instructions"] {
        let recorded = data.summary.contains_key(&format!("perf.{hw}"));
        let unsupported = data.unsupported.contains_key(&format!("perf.{hw}"));
        assert!(recorded != unsupported, "{hw}: {:?}", data.unsupported);
    }
}

#[test]
fn a_monitor_failing_mid_run_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("/proc/stat", dir.path().join("stat")).unwrap();
    let fixture_stat: Box<dyn Monitor> = Box::new(StatMonitor::new(dir.path().into()));
    let real_stat: Box<dyn Monitor> = Box::new(StatMonitor::new("/proc".into()));
    let sampler = RunSampler::start_monitors(
        vec![
            (fixture_stat, Duration::from_secs(60)),
            (real_stat, Duration::from_secs(60)),
        ],
        0,
    )
    .unwrap();
    // The start sample has been taken; the fixture's file now turns unreadable. (The monitor
    // keeps its file open, as /proc files stay: it is rewritten in place.)
    std::fs::write(dir.path().join("stat"), "no such format\n").unwrap();
    let data = sampler.finish();

    assert_eq!(data.failures.len(), 1, "{:?}", data.failures);
    assert_eq!(data.failures[0].monitor, "stat");
    assert!(data.failures[0].message.contains("stat"));
    let ctxt: Vec<_> = data
        .series
        .iter()
        .filter(|s| s.metric == "ctxt")
        .map(|s| s.points.len())
        .collect();
    assert_eq!(ctxt, vec![1, 2]);
}

#[test]
fn unsupported_monitors_are_values() {
    let dir = tempfile::tempdir().unwrap();
    let roots = Roots::under(dir.path());
    let specs = parse_monitor_list("schedstat,cpufreq,slab,pressure").unwrap();
    let data = RunSampler::start(&specs, &roots, 0).unwrap().finish();
    assert!(data.series.is_empty());
    assert!(data.failures.is_empty(), "{:?}", data.failures);
    let keys: Vec<&str> = data.unsupported.keys().map(String::as_str).collect();
    assert_eq!(keys, ["cpufreq", "pressure", "schedstat", "slab"]);
}

#[test]
fn a_monitor_samples_no_run_of_a_configuration_shorter_than_its_min_run() {
    // Three runs of one configuration each way, as the engine gives a configuration's runs
    // their kept monitors; these runs last microseconds.
    let runs = |list: &str| {
        let specs = parse_monitor_list(list).unwrap();
        let mut set = Some(MonitorSet::new(&specs, &Roots::real()));
        (0..3)
            .map(|_| {
                let (data, next, _) = RunSampler::start_set(set.take().unwrap(), 0)
                    .unwrap()
                    .finish_set();
                set = next;
                data
            })
            .collect::<Vec<_>>()
    };
    for data in runs("stat,interrupts:min-run=3600") {
        assert!(data.failures.is_empty(), "{:?}", data.failures);
        assert!(data.series.iter().all(|s| s.monitor != "interrupts"));
        assert!(data.find("stat", "ctxt").is_some());
        let why = &data.unsupported["interrupts"];
        assert!(
            why.starts_with("not sampled in runs shorter than 3600000 ms"),
            "{why}"
        );
        assert!(
            why.ends_with("interrupts:min-run=0 samples every run"),
            "{why}"
        );
    }
    for data in runs("stat,interrupts:min-run=0") {
        assert!(data.unsupported.is_empty(), "{:?}", data.unsupported);
        assert!(data.find("interrupts", "irq_total").is_some());
    }
}
