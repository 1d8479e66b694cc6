//! Executes a plan.
