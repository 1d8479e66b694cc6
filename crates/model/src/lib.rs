//! Plain data shared by every part of vernier: what a benchmark or another plugin is and the
//! registry of each kind ([`plugin`]), the typed options they take,
//! a validated plan of configurations, and the records that measurement writes and analysis
//! reads, and the [`Recorder`] seam through which measurement writes them. No I/O happens here; everything is `serde` so the store and the export format can
//! carry it unchanged.

pub mod benchmark;
pub mod bisect;
pub mod calibration;
pub mod child;
pub mod cpulist;
pub mod environment;
pub mod finding;
pub mod histogram;
pub mod ids;
pub mod monitor;
pub mod options;
pub mod plugin;
pub mod profile;
pub mod record;
pub mod recorder;
pub mod settings;
pub mod spec;
pub mod text;
pub mod trace;
pub mod validate;
pub mod values;

pub use benchmark::{BenchmarkInfo, MetricInfo};
pub use bisect::{BisectTerms, Bisection, BootFailure, KernelBoot, SessionLimits, BOOT_ATTEMPTS};
pub use calibration::Calibration;
pub use child::ChildSetup;
pub use environment::Environment;
pub use finding::{Finding, Severity};
pub use histogram::{Recording, RunHistogram};
pub use ids::{ConfigKey, RunPlace, ShortId};
pub use options::{OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
pub use plugin::{Describe, Description, Kind, PluginError, Registry, Text};
pub use profile::{FoldedStacks, ProfileRecord, ProfileScope, ProfileSettings};
pub use record::{
    check_user_text, ChangedSetting, ConfigurationRecord, RunRecord, Rusage, SessionInfo,
    SessionStatus, SetupStep, StopReason, StoredConfiguration, StoredSession,
};
pub use recorder::Recorder;
pub use settings::{level_percent, Settings, SettingsLayer, StoppingRule, CONFIDENCE_LEVEL};
pub use spec::{parse_spec, parse_spec_list, Spec, SpecError, SpecProblem};
pub use text::{escape_controls, Texts};
pub use trace::{ThreadTrace, TraceEvent};
pub use values::{MetricName, RunValues};
