//! Statistics for benchmark results, on plain slices of `f64`, without I/O.
//!
//! Every function checks its input (no NaN or infinity, enough points) and returns a
//! [`StatsError`] instead of a meaningless number. Each method names its source; results are
//! checked against SciPy on fixed inputs (see `tests/`).

mod error;
pub mod interval;
pub mod summary;

pub use error::StatsError;
pub use interval::{mean_ci, median_ci, Interval};
pub use summary::{mad, mean, median, quantile, std_dev};
