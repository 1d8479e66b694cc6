//! What runs around every measured run of a session ([`vernier_engine::RunHooks`]): the
//! per-run setup steps, then the loads, started last so that an idle gate or a cooldown waits
//! for a quiet machine without them; the loads stop right after the run.

use vernier_engine::RunHooks;
use vernier_load::{LoadPlan, RunningLoads};
use vernier_model::{ChangedSetting, SetupStep};
use vernier_setup::SetupGuard;

pub(crate) struct PerRunHooks<'a> {
    pub setup: Option<&'a mut SetupGuard>,
    pub loads: LoadPlan,
    pub running: Option<RunningLoads>,
}

impl RunHooks for PerRunHooks<'_> {
    fn check_setup(&mut self) -> Vec<ChangedSetting> {
        self.setup
            .as_ref()
            .map(|guard| guard.changed_settings())
            .unwrap_or_default()
    }

    fn before_run(&mut self) -> Result<Vec<SetupStep>, String> {
        let steps = match self.setup.as_mut() {
            Some(guard) => guard
                .before_run()
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|r| SetupStep {
                    plugin: r.plugin,
                    waited_ms: r.waited_ms,
                    timed_out: r.timed_out,
                    detail: r.detail,
                })
                .collect(),
            None => Vec::new(),
        };
        if !self.loads.is_empty() {
            self.running = Some(self.loads.start().map_err(|e| e.to_string())?);
        }
        Ok(steps)
    }

    fn after_run(&mut self) -> Result<Option<i64>, String> {
        let Some(running) = self.running.take() else {
            return Ok(None);
        };
        let usage = running.stop();
        if !usage.problems.is_empty() {
            return Err(usage.problems.join("; "));
        }
        Ok(Some(usage.cpu_ns))
    }
}
