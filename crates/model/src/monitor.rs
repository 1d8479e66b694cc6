//! Monitor data recorded during runs: time series and per-run summaries.
