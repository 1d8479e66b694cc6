//! Findings of the validity check: what on a machine threatens a measurement.
//!
//! `vernier system check` produces a list of [`Finding`]s; the report and the CLI render them,
//! and a session can store them next to its environment so a later reader knows what the
//! machine looked like when the numbers were taken.

use serde::{Deserialize, Serialize};

/// How much a finding threatens the validity of measurements. Ordered: `Info < Warning <
/// Critical`, so the worst finding of a list is its maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing and recording; results stay comparable on the same machine.
    Info,
    /// Likely to add noise or bias; fix it or keep it identical between compared runs.
    Warning,
    /// Results taken in this state should not be trusted.
    Critical,
}

impl Severity {
    pub fn as_str(&self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One observation of the validity check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable machine-readable identifier, kebab-case (`virtual-machine`, `governor`).
    pub id: String,
    pub severity: Severity,
    /// One line for a table.
    pub title: String,
    /// What was observed, with the numbers.
    pub detail: String,
    /// How to fix it (a command or a setting), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    pub fn new(
        id: impl Into<String>,
        severity: Severity,
        title: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Finding {
            id: id.into(),
            severity,
            title: title.into(),
            detail: detail.into(),
            fix: None,
        }
    }

    /// The same finding with a suggested fix.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn severity_orders_and_serializes_lowercase() {
        assert!(Severity::Info < Severity::Warning);
        assert!(Severity::Warning < Severity::Critical);
        assert_eq!(
            serde_json::to_string(&Severity::Critical).unwrap(),
            "\"critical\""
        );
        assert_eq!(Severity::Warning.to_string(), "warning");
    }

    #[test]
    fn finding_round_trips_and_omits_missing_fix() {
        let f = Finding::new(
            "swap",
            Severity::Warning,
            "swap in use",
            "12 MiB swapped out",
        );
        let json = serde_json::to_string(&f).unwrap();
        assert!(!json.contains("fix"), "{json}");
        let back: Finding = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        let g = f.with_fix("swapoff -a && swapon -a");
        let back: Finding = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(back.fix.as_deref(), Some("swapoff -a && swapon -a"));
        assert!(serde_json::from_str::<Finding>(
            r#"{"id":"x","severity":"fatal","title":"","detail":""}"#
        )
        .is_err());
    }
}
