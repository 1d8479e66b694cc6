-- Monitor data stored once and compactly (schema version 5).
--
-- Version 2 kept each run's monitor record as JSON text (every point an object, every name
-- spelled out in every run) and its summary a second time in run_monitor_summary, whose
-- primary key index held each row again: about 24 KB per run with the default monitors, parsed
-- by every read of a session. Now each name is stored once, in monitor_names, and a run's series
-- and summary are binary columns (encoding in docs/schema.md, "Monitor data").
--
-- After this script, vernier converts every row of run_monitors into run_monitors_v5, drops
-- run_monitors and run_monitor_summary and renames run_monitors_v5 to run_monitors
-- (crates/store/src/sqlite/migrations.rs, `compact_monitors`): the conversion decodes JSON,
-- which SQL cannot turn into this encoding.

-- Monitors, metrics, units and summary keys (`monitor.metric`), each once. Never deleted: the
-- ids are in the blobs of run_monitors, and a name is a few bytes.
CREATE TABLE monitor_names (
    id   INTEGER PRIMARY KEY,
    name TEXT    NOT NULL UNIQUE
) STRICT;

-- Everything the monitors recorded during one run (vernier_model::monitor::RunMonitorData).
CREATE TABLE run_monitors_v5 (
    run_id           TEXT    NOT NULL PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    sampler_priority TEXT    NOT NULL,
    sampler_cpu_ns   INTEGER NOT NULL,
    rounds           INTEGER NOT NULL CHECK (rounds >= 0),
    -- Monitor or counter -> why it could not be recorded (JSON object).
    unsupported      TEXT    NOT NULL CHECK (json_valid(unsupported)),
    -- Monitors that failed during the run (JSON array of {monitor, t_ns, message}).
    failures         TEXT    NOT NULL CHECK (json_valid(failures)),
    -- The time series, binary.
    series           BLOB    NOT NULL,
    -- `monitor.metric` -> change over the run (counters) or time-weighted mean (gauges), binary.
    summary          BLOB    NOT NULL
) STRICT;
