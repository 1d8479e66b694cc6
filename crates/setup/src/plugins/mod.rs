//! The setup plugins: one type per plugin, one file each, behind the [`Plugin`] trait, and
//! their [`registry`]. A plugin describes itself ([`PluginKind::describe`]: name, summary, typed
//! options), plans itself from its `--setup` request ([`PluginKind::plan`], its options already
//! checked and resolved by the registry: preflight against the machine, nothing changed), then
//! says what it changes for the session
//! ([`Plugin::changes`]), does before every measured run ([`Plugin::before_run`]) or sets for
//! the benchmark child ([`Plugin::child`]). The order of all that, the restore record and
//! restoring on every way out are the [`crate::guard`]'s; how each kind of [`Change`] is
//! applied and undone is in [`crate::record`], calling into the plugin that owns it.
//!
//! The child-side part (`rt`, `pin`) is a [`ChildSetup`] that each benchmark child applies to
//! itself with `vernier_sys::sched::apply_child_setup`.

mod cooldown;
pub(crate) mod dma_latency;
mod drop_caches;
mod governor;
mod idle_gate;
mod pin;
mod rt;
mod swap_reset;
mod sysctl;
pub(crate) mod trace;
pub(crate) mod turbo;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vernier_model::spec::Spec;
use vernier_model::{ChildSetup, Describe, Description, Kind, Options, Registry};
use vernier_sys::Roots;

use crate::record::Change;
use crate::spec::parse_setup_list;
use crate::SetupError;

/// When a step is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum When {
    /// Once, when the session starts; restored when it ends.
    Session,
    /// Before every measured run; nothing is left changed afterwards.
    Run,
}

/// A planned plugin: checked against the machine, with everything resolved to paths and
/// numbers. Nothing has changed yet.
pub(crate) trait Plugin: std::fmt::Debug + Send + Sync {
    /// When it acts; `None` for plugins that only set up the benchmark child.
    fn when(&self) -> Option<When>;

    /// The changes it makes, each with the value to put back, read now (nothing changes yet),
    /// labelled `label` in the restore record. The guard applies the changes of session
    /// plugins at once; those of per-run plugins are only registered, so that a run step
    /// interrupted half-way is repaired on restore.
    fn changes(&self, _label: &str) -> Result<Vec<Change>, SetupError> {
        Ok(Vec::new())
    }

    /// What a per-run plugin does before every measured run: whether a wait ended by its
    /// timeout, and what it observed last.
    fn before_run(&self, _waiter: &Waiter<'_>) -> Result<(bool, String), SetupError> {
        Ok((false, String::new()))
    }

    /// What it sets in each benchmark child.
    fn child(&self, _child: &mut ChildSetup) {}

    /// Whether it sets something on the host that the session restores when it ends: a
    /// session plugin's changes, and the swap areas that a per-run swap reset switches off and
    /// on. A session with such a plugin takes the host-wide lock (its restore record), so that
    /// no other session changes the host under it; waits, dropping caches and what only the
    /// benchmark child gets (`rt`, `pin`) need none.
    fn sets_host_state(&self) -> bool {
        self.when() == Some(When::Session)
    }
}

/// How a plugin describes itself and is planned from its request. A separate trait from
/// [`Plugin`] so that the planned plugins can be handled as `dyn Plugin`.
pub(crate) trait PluginKind: Plugin + Sized + 'static {
    /// The name, summary and options (those `plan` gets, typed and resolved).
    fn describe() -> Description;

    /// Checks the request `spec`, whose options the registry resolved into `options`, against
    /// the machine at `roots`. Fails with [`SetupError::Unavailable`] when the machine cannot
    /// do it (skipped when optional).
    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError>;
}

type Planner = fn(&Spec, &Options, &Roots) -> Result<Arc<dyn Plugin>, SetupError>;

/// A setup plugin of the registry: what it says about itself and how it is planned.
pub struct Entry {
    description: Description,
    plan: Planner,
}

impl Describe for Entry {
    fn description(&self) -> &Description {
        &self.description
    }
}

fn plan_boxed<P: PluginKind>(
    spec: &Spec,
    options: &Options,
    roots: &Roots,
) -> Result<Arc<dyn Plugin>, SetupError> {
    Ok(Arc::new(P::plan(spec, options, roots)?))
}

fn entry<P: PluginKind>() -> Entry {
    Entry {
        description: P::describe(),
        plan: plan_boxed::<P>,
    }
}

/// Every plugin, in the order help lists them and per-run steps run: swap reset and dropping
/// caches first, the waits last, after the I/O of the others.
pub fn registry() -> &'static Registry<Entry> {
    static REGISTRY: LazyLock<Registry<Entry>> = LazyLock::new(|| {
        Registry::new(
            Kind::Setup,
            vec![
                entry::<swap_reset::SwapReset>(),
                entry::<drop_caches::DropCaches>(),
                entry::<cooldown::Cooldown>(),
                entry::<idle_gate::IdleGate>(),
                entry::<governor::Governor>(),
                entry::<turbo::Turbo>(),
                entry::<dma_latency::DmaLatency>(),
                entry::<rt::Rt>(),
                entry::<pin::Pin>(),
                entry::<sysctl::Sysctl>(),
            ],
        )
    });
    &REGISTRY
}

/// One step of the plan.
#[derive(Debug, Clone)]
pub struct PlannedStep {
    /// The plugin as the user wrote it, for messages and the session record.
    pub plugin: String,
    pub when: When,
    pub(crate) action: Arc<dyn Plugin>,
}

/// An optional plugin that cannot be applied on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub plugin: String,
    pub reason: String,
}

/// A checked setup: nothing has changed on the machine yet.
#[derive(Debug, Clone)]
pub struct SetupPlan {
    /// Session steps in the order given; per-run steps in a fixed order (swap reset, drop
    /// caches, cooldown, idle gate) so that the waits come last, after the I/O of the others.
    pub steps: Vec<PlannedStep>,
    pub child: ChildSetup,
    pub skipped: Vec<Skipped>,
}

impl SetupPlan {
    pub fn session_steps(&self) -> impl Iterator<Item = &PlannedStep> {
        self.steps.iter().filter(|s| s.when == When::Session)
    }

    pub fn run_steps(&self) -> impl Iterator<Item = &PlannedStep> {
        self.steps.iter().filter(|s| s.when == When::Run)
    }

    /// Whether applying the plan sets something on the host that the session restores (see
    /// `Plugin::sets_host_state`): such a session holds the host-wide restore record, and needs
    /// the privilege to write it.
    pub fn sets_host_state(&self) -> bool {
        self.steps.iter().any(|s| s.action.sets_host_state())
    }

    /// True when the plan neither changes the system nor the child.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.child == ChildSetup::default()
    }
}

/// Parses the `--setup` arguments and checks every plugin against the machine at `roots`.
/// Nothing is changed. An unavailable plugin fails the plan unless it is optional (`name?`).
pub fn plan_setup<S: AsRef<str>>(specs: &[S], roots: &Roots) -> Result<SetupPlan, SetupError> {
    let specs = parse_setup_list(specs)?;
    let mut plan = SetupPlan {
        steps: Vec::new(),
        child: ChildSetup::default(),
        skipped: Vec::new(),
    };
    let mut keyed: Vec<(usize, PlannedStep)> = Vec::new();
    let online = vernier_sys::cpulist::online_cpus().len() as u32;
    for spec in &specs {
        let entry = registry().find(&spec.name)?;
        let options = registry().resolve(
            entry,
            spec.options.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            online,
        )?;
        match (entry.plan)(spec, &options, roots) {
            Ok(action) => {
                action.child(&mut plan.child);
                if let Some(when) = action.when() {
                    let key = match when {
                        When::Session => 0,
                        // Per-run steps in registry order.
                        When::Run => {
                            1 + registry()
                                .iter()
                                .position(|e| std::ptr::eq(e, entry))
                                .unwrap_or(0)
                        }
                    };
                    keyed.push((
                        key,
                        PlannedStep {
                            plugin: spec.text.trim_end_matches('?').to_string(),
                            when,
                            action,
                        },
                    ));
                }
            }
            Err(SetupError::Unavailable { plugin, reason }) if spec.optional => {
                plan.skipped.push(Skipped { plugin, reason })
            }
            Err(e) => return Err(e),
        }
    }
    // Stable: session steps keep the order given.
    keyed.sort_by_key(|(key, _)| *key);
    plan.steps = keyed.into_iter().map(|(_, step)| step).collect();
    Ok(plan)
}

/// The plugin cannot work on this machine, for `reason`.
fn unavailable(spec: &Spec, reason: impl Into<String>) -> SetupError {
    SetupError::Unavailable {
        plugin: spec.name.clone(),
        reason: reason.into(),
    }
}

/// Ok when `path` exists and this process may write it (access(2) with W_OK).
fn check_writable(path: &Path) -> Result<(), String> {
    if !path.exists() {
        return Err(format!("{} is absent", path.display()));
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: path contains a NUL byte", path.display()))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!(
            "{} is not writable ({}; run as root)",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The waits of per-run plugins: sleeps that end early with [`SetupError::Cancelled`] when the
/// cancel flag (the CLI's Ctrl-C flag) becomes true.
pub(crate) struct Waiter<'a> {
    pub(crate) cancel: Option<&'a AtomicBool>,
}

impl Waiter<'_> {
    /// Sleeps `d`, in slices so that a cancel flag is seen within 100 ms.
    pub(crate) fn sleep(&self, d: Duration) -> Result<(), SetupError> {
        let end = Instant::now() + d;
        loop {
            if self.cancel.is_some_and(|f| f.load(Ordering::Relaxed)) {
                return Err(SetupError::Cancelled);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fixture;
    use vernier_model::PluginError;

    #[test]
    fn plans_every_plugin_on_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        // rt asks the running process for SCHED_FIFO, which root has and a normal user
        // usually not; without it the refusal is checked instead.
        let rt = if rt::probe_fifo(50).is_ok() {
            "rt"
        } else {
            eprintln!("skipped: planning rt needs SCHED_FIFO (root); checking the refusal");
            let e = plan_setup(&["rt"], &roots).unwrap_err();
            assert!(matches!(e, SetupError::Unavailable { .. }), "{e}");
            "rt?"
        };
        let plan = plan_setup(
            &[
                "idle-gate,cooldown:seconds=1,governor,drop-caches,turbo,dma-latency",
                &format!("swap-reset:when=run,{rt},pin:cpus=1,sysctl:kernel.timer_migration=0"),
            ],
            &roots,
        )
        .unwrap();
        let skipped: Vec<&str> = plan.skipped.iter().map(|s| s.plugin.as_str()).collect();
        let permitted = rt == "rt";
        assert_eq!(skipped, if permitted { vec![] } else { vec!["rt"] });
        assert_eq!(
            plan.child,
            ChildSetup {
                rt_priority: permitted.then_some(50),
                cpus: Some(vec![1]),
                ..ChildSetup::default()
            }
        );
        let session: Vec<&str> = plan.session_steps().map(|s| s.plugin.as_str()).collect();
        assert_eq!(
            session,
            [
                "governor",
                "turbo",
                "dma-latency",
                "sysctl:kernel.timer_migration=0"
            ]
        );
        // Per-run steps in the fixed order: swap reset, drop caches, then the waits.
        let run: Vec<&str> = plan.run_steps().map(|s| s.plugin.as_str()).collect();
        assert_eq!(
            run,
            [
                "swap-reset:when=run",
                "drop-caches",
                "cooldown:seconds=1",
                "idle-gate"
            ]
        );
        let governor = plan.session_steps().next().unwrap();
        let writes = governor.action.changes(&governor.plugin).unwrap();
        assert_eq!(writes.len(), 2);
        assert!(writes
            .iter()
            .all(|c| matches!(c, Change::WriteFile { value, .. } if value == "performance")));
        assert!(!plan.is_empty());
        assert!(plan_setup::<&str>(&[], &roots).unwrap().is_empty());
    }

    #[test]
    fn names_the_valid_plugins_and_options() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        let e = plan_setup(&["drop-cache"], &roots).unwrap_err();
        assert!(matches!(e, SetupError::Plugin(PluginError::Unknown { .. })));
        assert_eq!(
            e.to_string(),
            "unknown setup plugin 'drop-cache'; valid setup plugins: swap-reset, drop-caches, \
             cooldown, idle-gate, governor, turbo, dma-latency, rt, pin, sysctl"
        );
        let e = plan_setup(&["cooldown:secs=3"], &roots).unwrap_err();
        assert_eq!(
            e.to_string(),
            "setup plugin 'cooldown' has no option 'secs'; valid options: seconds, load, timeout"
        );
        let e = plan_setup(&["turbo:x=1"], &roots).unwrap_err();
        assert!(e.to_string().ends_with("valid options: none"), "{e}");
        // Values are typed as every plugin's are, in the same words.
        for (bad, expected) in [
            ("cooldown:seconds=-1", "expected a number in 0..=86400"),
            ("cooldown:load=abc", "expected a number in 0..=1000000"),
            ("idle-gate:threshold=101", "expected a number in 0..=100"),
            ("swap-reset:when=always", "expected one of session, run"),
            ("rt:priority=0", "expected an integer in 1..=99"),
            ("rt:priority=100", "expected an integer in 1..=99"),
            ("rt:priority=2.5", "expected an integer in 1..=99"),
            ("pin:cpus=x", "expected all or a CPU list such as 0-1,3"),
            ("dma-latency:us=-1", "expected an integer in 0..=2147483647"),
        ] {
            let e = plan_setup(&[bad], &roots).unwrap_err();
            assert!(
                matches!(e, SetupError::Plugin(PluginError::Value { .. })),
                "{bad}: {e}"
            );
            assert!(e.to_string().ends_with(expected), "{bad}: {e}");
        }
        assert!(matches!(
            plan_setup(&["sysctl:kernel..x=1"], &roots),
            Err(SetupError::BadOption { .. })
        ));
        assert!(matches!(
            plan_setup(&["pin"], &roots),
            Err(SetupError::Parse { .. })
        ));
        assert!(matches!(
            plan_setup(&["sysctl"], &roots),
            Err(SetupError::Parse { .. })
        ));
        // Every option a plugin declares has its help.
        for entry in registry().iter() {
            let d = entry.description();
            assert!(d.options.iter().all(|o| !o.help.is_empty()), "{}", d.name);
        }
    }

    #[test]
    fn unavailable_plugins_fail_unless_optional() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        for rel in [
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "sys/devices/system/cpu/cpufreq/boost",
            "dev/cpu_dma_latency",
        ] {
            std::fs::remove_file(dir.path().join(rel)).unwrap();
        }
        let e = plan_setup(&["governor"], &roots).unwrap_err();
        assert!(matches!(e, SetupError::Unavailable { .. }));
        assert!(e.to_string().contains("no cpufreq driver"), "{e}");
        let e = plan_setup(&["turbo"], &roots).unwrap_err();
        assert!(e.to_string().contains("no turbo control"), "{e}");
        assert!(plan_setup(&["dma-latency"], &roots).is_err());
        assert!(plan_setup(&["sysctl:kernel.nope=1"], &roots).is_err());
        let e = plan_setup(&["pin:cpus=0-2"], &roots).unwrap_err();
        assert!(e.to_string().contains("CPU 2 is not online"), "{e}");
        // A governor that the driver does not offer.
        let roots2_dir = tempfile::tempdir().unwrap();
        let roots2 = fixture::tree(roots2_dir.path());
        assert!(plan_setup(&["governor:governor=schedutil"], &roots2).is_err());

        let plan = plan_setup(&["governor?,turbo?,dma-latency?,drop-caches"], &roots).unwrap();
        let skipped: Vec<&str> = plan.skipped.iter().map(|s| s.plugin.as_str()).collect();
        assert_eq!(skipped, ["governor", "turbo", "dma-latency"]);
        assert_eq!(plan.steps.len(), 1);
        // Optional does not hide mistakes in the request itself.
        assert!(plan_setup(&["governor?:bogus=1"], &roots).is_err());
    }
}
