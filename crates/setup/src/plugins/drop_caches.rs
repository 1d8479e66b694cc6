//! `drop-caches`: before every measured run, sync(2) and then write `3` to
//! /proc/sys/vm/drop_caches, freeing the page cache, dentries and inodes
//! (Documentation/admin-guide/sysctl/vm.rst, drop_caches). Dirty pages are not dropped, hence
//! the sync first. Nothing is left changed, so there is nothing to restore.

use std::path::PathBuf;

use vernier_model::spec::Spec;
use vernier_model::{Description, Options};
use vernier_sys::Roots;

use super::{check_writable, unavailable, Plugin, PluginKind, Waiter, When};
use crate::record::write_value;
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct DropCaches {
    path: PathBuf,
}

impl PluginKind for DropCaches {
    fn describe() -> Description {
        Description::new(
            "drop-caches",
            "sync, then drop the page cache, dentries and inodes before every run (root)",
        )
    }

    fn plan(spec: &Spec, _options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let path = roots.proc_root.join("sys/vm/drop_caches");
        check_writable(&path).map_err(|r| unavailable(spec, r))?;
        Ok(DropCaches { path })
    }
}

impl Plugin for DropCaches {
    fn when(&self) -> Option<When> {
        Some(When::Run)
    }

    fn before_run(&self, _waiter: &Waiter<'_>) -> Result<(bool, String), SetupError> {
        // SAFETY: sync(2) has no preconditions and always succeeds.
        unsafe { libc::sync() };
        write_value(&self.path, "3")?;
        Ok((false, "synced, caches dropped".to_string()))
    }
}
