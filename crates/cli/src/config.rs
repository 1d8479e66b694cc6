//! The user's configuration directory of vernier: `$XDG_CONFIG_HOME/vernier` (by default
//! `~/.config/vernier`), where suites and benchmarks of the user's own live.

use std::path::PathBuf;

/// `vernier/` in the user's configuration directory, when there is one.
fn config_root() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("vernier"))
}

/// The directory of the user's suites: `NAME.toml` is `--suite NAME`.
pub fn suite_dir() -> Option<PathBuf> {
    config_root().map(|d| d.join("suites"))
}
