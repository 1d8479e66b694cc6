//! Findings of the validity check: what on a machine threatens a measurement.
