-- Monitors, setup and validity findings (schema version 2).

-- What `system check` found when the session started, the setup plugins applied and the
-- monitors sampled, each as JSON text (arrays).
ALTER TABLE sessions ADD COLUMN findings TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sessions ADD COLUMN setup TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sessions ADD COLUMN monitors TEXT NOT NULL DEFAULT '[]';

-- The per-run setup steps executed before a run (JSON array of {plugin, waited_ms, timed_out, detail}).
ALTER TABLE runs ADD COLUMN setup_steps TEXT NOT NULL DEFAULT '[]';

-- Everything the monitors recorded during a run: the time series, failures and unsupported
-- monitors, as one JSON document (vernier_model::monitor::RunMonitorData).
CREATE TABLE run_monitors (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    data   TEXT NOT NULL
) STRICT;

-- The per-run summary of every series (delta of a counter, time-weighted mean of a gauge),
-- keyed `monitor.metric`, for queries across runs.
CREATE TABLE run_monitor_summary (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (run_id, key)
) STRICT;

-- Kernel configurations, each distinct text once, named by its SHA-256 (the environment's
-- kernel_config_sha256).
CREATE TABLE kernel_configs (
    sha256 TEXT PRIMARY KEY,
    text   TEXT NOT NULL
) STRICT;
