//! The session's ftrace instance, for configurations that trace their worst latencies
//! (`latency:trace=US`): not a `--setup` plugin a user names, but a step the application
//! layer adds to the plan ([`SetupPlan::add_trace`]) so that the instance is made, recorded
//! and removed by the same guard and restore record as every other change, on every way out
//! (success, error, panic, the ending signals, and `vernier system reset` after `kill -9`).
//!
//! Its changes: tracefs mounted where it is not ([`Change::MountTracefs`]), and the instance
//! `instances/vernier-PID` with the events of [`TRACE_EVENTS`] that exist on the CPUs measured
//! ([`Change::TraceInstance`]). The benchmark child learns the instance from its
//! [`ChildSetup::trace_instance`], arms it before a run, marks the first sample above the
//! threshold and stops it.

use std::path::{Path, PathBuf};

use vernier_model::trace::TRACE_EVENTS;
use vernier_model::ChildSetup;
use vernier_sys::tracefs;
use vernier_sys::Roots;

use super::{check_writable, PlannedStep, Plugin, SetupPlan, When};
use crate::record::Change;
use crate::SetupError;

/// The step's name in messages and the restore record.
pub const TRACE_STEP: &str = "trace";

/// The planned instance: where tracefs is (or will be mounted) and the instance in it.
#[derive(Debug)]
pub(crate) struct TraceInstance {
    /// tracefs's mount point when this session mounts it.
    mount: Option<PathBuf>,
    instance: PathBuf,
    cpus: Vec<usize>,
}

fn unavailable(reason: impl Into<String>) -> SetupError {
    SetupError::Unavailable {
        plugin: TRACE_STEP.into(),
        reason: reason.into(),
    }
}

/// Plans the session's instance on `cpus` on the machine at `roots`: tracefs mounted, or
/// mountable by this process (root); the instance directory writable; the scheduler's events
/// present. Changes nothing.
pub(crate) fn plan_trace(roots: &Roots, cpus: &[usize]) -> Result<TraceInstance, SetupError> {
    let (root, mount) = match tracefs::mounted_tracefs(&roots.proc_root) {
        Some(point) => (point, None),
        None => {
            let point = roots.sys_root.join(tracefs::TRACEFS_MOUNT);
            if !point.is_dir() {
                return Err(unavailable(format!(
                    "tracefs is not mounted and {} is absent (a kernel without \
                     CONFIG_TRACING?)",
                    point.display()
                )));
            }
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                return Err(unavailable(format!(
                    "tracefs is not mounted and mounting it at {} needs root",
                    point.display()
                )));
            }
            (point.clone(), Some(point))
        }
    };
    if mount.is_none() {
        check_writable(&root.join("instances")).map_err(unavailable)?;
        let events = tracefs::available_events(&root).map_err(|e| unavailable(e.to_string()))?;
        if !events.iter().any(|e| e == "sched/sched_switch") {
            return Err(unavailable(
                "the kernel has no sched:sched_switch event (available_events)",
            ));
        }
    }
    Ok(TraceInstance {
        instance: root
            .join("instances")
            .join(format!("vernier-{}", std::process::id())),
        mount,
        cpus: cpus.to_vec(),
    })
}

impl Plugin for TraceInstance {
    fn when(&self) -> Option<When> {
        Some(When::Session)
    }

    fn changes(&self, _label: &str) -> Result<Vec<Change>, SetupError> {
        let mut changes = Vec::new();
        if let Some(path) = &self.mount {
            changes.push(Change::MountTracefs { path: path.clone() });
        }
        changes.push(Change::TraceInstance {
            path: self.instance.clone(),
            cpus: self.cpus.clone(),
        });
        Ok(changes)
    }

    fn child(&self, child: &mut ChildSetup) {
        child.trace_instance = Some(self.instance.clone());
    }
}

/// The finding a traced session records: what the instance records and what that costs the
/// measurement, as `bench/trace-cost.sh` measured it (docs/why.md, "Traces").
pub fn trace_finding(plan: &SetupPlan) -> Option<vernier_model::Finding> {
    if !plan.steps.iter().any(|s| s.plugin == TRACE_STEP) {
        return None;
    }
    Some(
        vernier_model::Finding::new(
            "latency-traced",
            vernier_model::Severity::Info,
            "latencies traced with ftrace",
            format!(
                "an ftrace instance recorded sched_switch, sched_wakeup, irq, softirq, hrtimer \
                 and local-timer events on the measured CPUs during every measured run, until \
                 the run's first sample above its trace threshold; {TRACE_COST}"
            ),
        )
        .with_fix("compare traced runs with traced runs; leave trace= out for the figures"),
    )
}

/// What tracing cost where it was measured (bench/trace-cost.sh; docs/why.md, "Traces").
const TRACE_COST: &str = "on a 2-vCPU KVM guest, bench/trace-cost.sh measured runs with the \
     events recording against runs without, interleaved: p50 6-11% higher (2-4 us), the run \
     process's CPU time 5-10% higher, p99 within the noise of the runs (-1.5% to +12%); \
     compare traced runs with traced runs";

impl SetupPlan {
    /// Adds the session's ftrace instance on `cpus` (the CPUs of the configurations that
    /// trace), checked against the machine at `roots`. Nothing changes yet.
    pub fn add_trace(&mut self, roots: &Roots, cpus: &[usize]) -> Result<(), SetupError> {
        let step = plan_trace(roots, cpus)?;
        step.child(&mut self.child);
        self.steps.push(PlannedStep {
            plugin: TRACE_STEP.into(),
            when: When::Session,
            action: std::sync::Arc::new(step),
        });
        Ok(())
    }
}

/// Mounts tracefs at `path` unless it is mounted there already.
pub(crate) fn mount(path: &Path) -> Result<(), SetupError> {
    if tracefs::mounted_tracefs(Path::new("/proc")).as_deref() == Some(path) {
        return Ok(());
    }
    tracefs::mount_tracefs(path).map_err(|e| SetupError::Apply {
        plugin: TRACE_STEP.into(),
        detail: e.to_string(),
    })
}

/// Unmounts tracefs from `path` if it is mounted there.
pub(crate) fn unmount(path: &Path) -> Result<(), SetupError> {
    if tracefs::mounted_tracefs(Path::new("/proc")).as_deref() != Some(path) {
        return Ok(());
    }
    tracefs::unmount(path).map_err(SetupError::from)
}

/// Makes the instance `path` on `cpus` with every event of [`TRACE_EVENTS`] the kernel has.
pub(crate) fn create(path: &Path, cpus: &[usize]) -> Result<(), SetupError> {
    tracefs::create_instance(path, cpus, TRACE_EVENTS)
        .map(|_absent| ())
        .map_err(|e| SetupError::Apply {
            plugin: TRACE_STEP.into(),
            detail: e.to_string(),
        })
}

/// Removes the instance `path`, if it is there.
pub(crate) fn remove(path: &Path) -> Result<(), SetupError> {
    tracefs::remove_instance(path).map_err(SetupError::from)
}
