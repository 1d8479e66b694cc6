//! Why a request could not be run: the other crates' errors as they are, and the application
//! layer's own, each one line that names what was wrong and what is valid.

use std::path::PathBuf;

use uuid::Uuid;
use vernier_store::Location;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Suite(#[from] vernier_engine::suite::SuiteError),
    #[error(transparent)]
    Plan(#[from] vernier_engine::PlanError),
    /// A plan of a suite file's specs: the file is named. (Boxed, as is every large source
    /// beside a path, so that every `Result` of the layer stays small.)
    #[error("suite {}: {source}", .path.display())]
    SuitePlan {
        path: PathBuf,
        source: Box<vernier_engine::PlanError>,
    },
    #[error(
        "--seed sets the order of interleaved rounds, but this session does not interleave: \
         give --interleave too, or a suite with interleave = true"
    )]
    SeedWithoutInterleave,
    #[error("tag '{0}' is given twice")]
    TagTwice(String),
    #[error("cannot start the watcher of the session's time limit: {0}")]
    TimeLimitWatcher(std::io::Error),
    #[error(transparent)]
    Spec(#[from] vernier_model::SpecError),
    /// A benchmark of the user's own, named by a spec, that cannot describe itself.
    #[error("{0}")]
    UserBenchmark(String),
    #[error(transparent)]
    Monitor(#[from] vernier_monitor::MonitorError),
    #[error(transparent)]
    Load(#[from] vernier_load::LoadError),
    /// A load that failed its trial start.
    #[error("{0}")]
    LoadTrial(String),
    #[error(transparent)]
    Setup(#[from] vernier_setup::SetupError),
    #[error(transparent)]
    Profile(#[from] vernier_engine::ProfileError),
    /// The host's record directory cannot be written by this process.
    #[error("{what} sets host state, whose restore record is the host's, in {}: {detail}; run as root{hint}", .dir.display())]
    RunDir {
        what: String,
        dir: PathBuf,
        detail: String,
        hint: String,
    },
    #[error("{}: the path holds a NUL byte", .0.display())]
    NulInPath(PathBuf),
    #[error("cannot read {}", .path.display())]
    ReadRecord {
        path: PathBuf,
        source: Box<vernier_setup::SetupError>,
    },
    #[error("cannot find the vernier executable")]
    Executable(#[source] std::io::Error),
    #[error(transparent)]
    Store(#[from] vernier_store::StoreError),
    /// A store error that does not name its database.
    #[error("database {location}")]
    Database {
        location: Location,
        source: vernier_store::StoreError,
    },
    #[error("cannot load session {id}")]
    LoadSession {
        id: Uuid,
        source: vernier_store::StoreError,
    },
    #[error(transparent)]
    Sys(#[from] vernier_sys::SysError),
    #[error("cannot install the signal handlers")]
    SignalHandlers(#[source] std::io::Error),
    /// Another session holds the host's setup, and `--if-busy run` does not wait for it.
    #[error("cannot apply the setup: {0}, or give --if-busy wait to wait for it")]
    SetupHeld(vernier_setup::SetupError),
    #[error("cannot apply the setup")]
    ApplySetup(#[source] vernier_setup::SetupError),
    #[error(transparent)]
    Engine(#[from] vernier_engine::EngineError),
    #[error("cannot restore the system after the session")]
    Restore(#[source] vernier_setup::SetupError),
    #[error("cannot read back the session")]
    ReadBack(#[source] Box<AppError>),
    #[error(transparent)]
    Analysis(#[from] vernier_analysis::AnalysisError),
    #[error("'{name}' cannot be monitored; valid: {valid}")]
    NotMonitorable { name: String, valid: String },
    #[error("the interval sets the duration of each run: give --interval instead of duration=")]
    DurationOfInterval,
    #[error("--for {total} s is shorter than one --interval of {interval} s")]
    ShorterThanInterval { total: f64, interval: f64 },
    #[error(
        "--sessions {0} is out of range: at least 2 sessions (the noise between sessions needs \
         two to show) and at most {max}",
        max = crate::calibrate::MAX_SESSIONS
    )]
    CalibrationSessions(u32),
    #[error(
        "--runs {0} is too few: at least 2 measured runs per session (the noise within a \
         session needs two to show)"
    )]
    CalibrationRuns(u32),
    #[error("session {index} of the calibration failed; no calibration stored")]
    CalibrationSession { index: u32, source: Box<AppError> },
    #[error("session {index} of the calibration failed ({detail}); no calibration stored")]
    CalibrationSessionFailed { index: u32, detail: String },
    #[error("no configuration has measured runs in two sessions: nothing to calibrate")]
    NothingToCalibrate,
    /// `vernier bisect`: a refused request or a step that cannot go on.
    #[error("{0}")]
    Bisect(String),
    #[error(transparent)]
    BisectRule(#[from] vernier_analysis::bisect::BisectError),
    #[error("cannot store the calibration")]
    StoreCalibration(#[source] vernier_store::StoreError),
}
