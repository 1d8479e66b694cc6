//! `vernier system check | tune | reset`.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use vernier_setup::RestoreRecord;
use vernier_sys::Roots;

use crate::cli::SystemCommand;
use crate::out::{out, outln};
use vernier_app::host;
use vernier_report::format::findings_text;

pub fn system(command: SystemCommand) -> Result<ExitCode> {
    let roots = Roots::real();
    match command {
        SystemCommand::Check => {
            let findings = vernier_setup::system_check(&roots);
            out!("{}", findings_text(&findings));
        }
        SystemCommand::Tune { dry_run } => {
            let changes = if dry_run {
                vernier_setup::plan_tune(&roots)?
            } else {
                // Tuning under a session's setup would change its measurements, and the
                // session's restore would then undo part of the tuning.
                if let Some(r) = host::holder()? {
                    bail!(
                        "nothing was tuned: {} is running with its setup applied; tune after \
                         it ends",
                        r.owner_description()
                    );
                }
                host::prepare("system tune", "")?;
                vernier_setup::tune(&roots, &host::tune_record())
                    .context("cannot tune the system")?
            };
            if changes.is_empty() {
                outln!("nothing to tune: every recommended setting this machine supports is set");
            }
            for c in &changes {
                outln!("{}{}", if dry_run { "would: " } else { "" }, c.describe());
            }
            if !dry_run && !changes.is_empty() {
                outln!("`vernier system reset` restores the previous settings");
            }
        }
        SystemCommand::Reset => {
            // The host's records, whoever wrote them, and those an earlier vernier kept per
            // user (crate::host).
            let mut records = vec![host::tune_record(), host::session_record()];
            records.extend(host::per_user_records());
            // A running session restores its own setup when it ends; undoing it under the
            // session would invalidate its measurements. Checked before anything is restored.
            for record in &records {
                let loaded = RestoreRecord::load(record)
                    .with_context(|| format!("cannot read {}", record.display()))?;
                if let Some(r) = loaded.filter(RestoreRecord::held_by_another_process) {
                    bail!(
                        "nothing was reset: {} is running and restores what it changed when it \
                         ends (`kill {}` ends it in order)",
                        r.owner_description(),
                        r.pid
                    );
                }
            }
            let mut restored = Vec::new();
            for record in records {
                if record.exists() {
                    // Restored last change first; listed in that order.
                    restored.extend(
                        vernier_setup::reset(&record)
                            .with_context(|| format!("cannot restore from {}", record.display()))?
                            .into_iter()
                            .rev(),
                    );
                }
            }
            if restored.is_empty() {
                outln!("nothing to restore");
            }
            for c in &restored {
                outln!("restored: {}", restored_text(c));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What restoring a change did: a file goes from the value set back to the previous one.
fn restored_text(c: &vernier_setup::Change) -> String {
    match c {
        vernier_setup::Change::WriteFile {
            path,
            previous,
            value,
            ..
        } => format!("{}: {value} -> {previous}", path.display()),
        other => other.describe(),
    }
}
