-- Integer keys inside the database, run ids in 16 bytes, the primary value in the run's row
-- (schema version 9).
--
-- Before, every run, value, histogram and monitor record named its run by the 36-byte text of
-- its UUID, and every run its configuration likewise: two indexes of such texts were a third of
-- the file, and every read joined on them. Now configurations and runs have an INTEGER PRIMARY
-- KEY (`key`, SQLite's rowid) that the tables below them refer to; the UUIDs stay the public
-- identity (unique columns, what vernier shows, exports and selects by), a run's as its 16
-- bytes (BLOB, big-endian as RFC 9562 writes them). The value of a run's primary metric, which
-- every run has, is a column of the run (`runs.value`); `run_values` keeps the other metrics.
-- The runs keep their rowids as keys, so the order of insertion is kept.
--
-- Each table is built anew and filled from the old one (SQLite cannot change a primary key in
-- place), children first dropped, then renamed; the rename points the new tables' foreign keys
-- at the final names (https://www.sqlite.org/lang_altertable.html#altertabrename).

CREATE TABLE configurations_v9 (
    key               INTEGER PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,
    session_id        TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position          INTEGER NOT NULL CHECK (position >= 0),
    benchmark         TEXT    NOT NULL,
    benchmark_version TEXT    NOT NULL,
    options           TEXT    NOT NULL CHECK (json_valid(options)),
    metric            TEXT    NOT NULL,
    unit              TEXT    NOT NULL,
    higher_is_better  INTEGER NOT NULL CHECK (higher_is_better IN (0, 1)),
    stop_reason       TEXT,
    converged         INTEGER NOT NULL DEFAULT 0 CHECK (converged IN (0, 1)),
    error             TEXT,
    secondary_metrics TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(secondary_metrics)),
    loads             TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(loads)),
    UNIQUE (session_id, position)
) STRICT;

INSERT INTO configurations_v9 (key, id, session_id, position, benchmark, benchmark_version,
    options, metric, unit, higher_is_better, stop_reason, converged, error, secondary_metrics,
    loads)
SELECT rowid, id, session_id, position, benchmark, benchmark_version, options, metric, unit,
    higher_is_better, stop_reason, converged, error, secondary_metrics, loads
FROM configurations ORDER BY rowid;

CREATE TABLE runs_v9 (
    key                  INTEGER PRIMARY KEY,
    id                   BLOB    NOT NULL UNIQUE CHECK (length(id) = 16),
    configuration_key    INTEGER NOT NULL
                                 REFERENCES configurations_v9 (key) ON DELETE CASCADE,
    idx                  INTEGER NOT NULL CHECK (idx >= 0),
    warmup               INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    round                INTEGER NOT NULL CHECK (round >= 0),
    preceding_executions INTEGER NOT NULL CHECK (preceding_executions >= 0),
    started_at_ns        INTEGER NOT NULL,
    ended_at_ns          INTEGER NOT NULL,
    value                REAL,
    user_cpu_ns          INTEGER NOT NULL,
    system_cpu_ns        INTEGER NOT NULL,
    voluntary_cs         INTEGER NOT NULL,
    involuntary_cs       INTEGER NOT NULL,
    max_rss_bytes        INTEGER NOT NULL,
    foreign_cpu_ns       INTEGER NOT NULL,
    controller_cpu_ns    INTEGER NOT NULL,
    load_cpu_ns          INTEGER,
    setup_steps          TEXT    NOT NULL DEFAULT '[]',
    setup_changed        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(setup_changed)),
    UNIQUE (configuration_key, warmup, idx)
) STRICT;

INSERT INTO runs_v9 (key, id, configuration_key, idx, warmup, round, preceding_executions,
    started_at_ns, ended_at_ns, value, user_cpu_ns, system_cpu_ns, voluntary_cs,
    involuntary_cs, max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, load_cpu_ns, setup_steps,
    setup_changed)
SELECT r.rowid, unhex(replace(r.id, '-', '')), c.rowid, r.idx, r.warmup, r.round,
    r.preceding_executions, r.started_at_ns, r.ended_at_ns,
    (SELECT v.value FROM run_values v WHERE v.run_id = r.id AND v.metric = c.metric),
    r.user_cpu_ns, r.system_cpu_ns, r.voluntary_cs, r.involuntary_cs, r.max_rss_bytes,
    r.foreign_cpu_ns, r.controller_cpu_ns, r.load_cpu_ns, r.setup_steps, r.setup_changed
FROM runs r JOIN configurations c ON c.id = r.configuration_id ORDER BY r.rowid;

CREATE TABLE run_values_v9 (
    run_key INTEGER NOT NULL REFERENCES runs_v9 (key) ON DELETE CASCADE,
    metric  TEXT    NOT NULL,
    value   REAL    NOT NULL,
    PRIMARY KEY (run_key, metric)
) STRICT, WITHOUT ROWID;

INSERT INTO run_values_v9 (run_key, metric, value)
SELECT r.rowid, v.metric, v.value
FROM run_values v JOIN runs r ON r.id = v.run_id JOIN configurations c ON c.id = r.configuration_id
WHERE v.metric <> c.metric;

CREATE TABLE run_histograms_v9 (
    run_key   INTEGER NOT NULL REFERENCES runs_v9 (key) ON DELETE CASCADE,
    quantity  TEXT    NOT NULL,
    thread    INTEGER NOT NULL CHECK (thread >= 0),
    cpu       INTEGER CHECK (cpu >= 0),
    count     INTEGER NOT NULL CHECK (count >= 0),
    min_ns    INTEGER NOT NULL CHECK (min_ns >= 0),
    max_ns    INTEGER NOT NULL CHECK (max_ns >= 0),
    max_index INTEGER CHECK (max_index >= 0),
    sum_ns    INTEGER NOT NULL CHECK (sum_ns >= 0),
    overflows INTEGER NOT NULL CHECK (overflows >= 0),
    missed    INTEGER NOT NULL CHECK (missed >= 0),
    buckets   BLOB    NOT NULL,
    PRIMARY KEY (run_key, quantity, thread)
) STRICT, WITHOUT ROWID;

INSERT INTO run_histograms_v9 (run_key, quantity, thread, cpu, count, min_ns, max_ns,
    max_index, sum_ns, overflows, missed, buckets)
SELECT r.rowid, h.quantity, h.thread, h.cpu, h.count, h.min_ns, h.max_ns, h.max_index,
    h.sum_ns, h.overflows, h.missed, h.buckets
FROM run_histograms h JOIN runs r ON r.id = h.run_id;

CREATE TABLE run_monitors_v9 (
    run_key          INTEGER PRIMARY KEY REFERENCES runs_v9 (key) ON DELETE CASCADE,
    sampler_priority TEXT    NOT NULL,
    sampler_cpu_ns   INTEGER NOT NULL,
    rounds           INTEGER NOT NULL CHECK (rounds >= 0),
    unsupported      TEXT    NOT NULL CHECK (json_valid(unsupported)),
    failures         TEXT    NOT NULL CHECK (json_valid(failures)),
    series           BLOB    NOT NULL,
    summary          BLOB    NOT NULL
) STRICT;

INSERT INTO run_monitors_v9 (run_key, sampler_priority, sampler_cpu_ns, rounds, unsupported,
    failures, series, summary)
SELECT r.rowid, m.sampler_priority, m.sampler_cpu_ns, m.rounds, m.unsupported, m.failures,
    m.series, m.summary
FROM run_monitors m JOIN runs r ON r.id = m.run_id ORDER BY r.rowid;

-- Children before parents, so that no drop cascades into a table still to be copied.
DROP TABLE run_monitors;
DROP TABLE run_histograms;
DROP TABLE run_values;
DROP TABLE runs;
DROP TABLE configurations;
ALTER TABLE configurations_v9 RENAME TO configurations;
ALTER TABLE runs_v9 RENAME TO runs;
ALTER TABLE run_values_v9 RENAME TO run_values;
ALTER TABLE run_histograms_v9 RENAME TO run_histograms;
ALTER TABLE run_monitors_v9 RENAME TO run_monitors;

-- The same configuration across sessions (history, compare).
CREATE INDEX configurations_by_benchmark ON configurations (benchmark, options);
-- A session's configurations are found by UNIQUE (session_id, position), the runs of a
-- configuration by UNIQUE (configuration_key, warmup, idx); version 8's index of runs by
-- configuration and start time is gone (reads order a session's runs themselves).

-- Every metric value of every run, the primary one included, as version 8's run_values held
-- them (with the run's key instead of its id): what a query by hand reads most easily.
CREATE VIEW run_metric_values AS
SELECT r.key AS run_key, c.metric AS metric, r.value AS value
FROM runs r JOIN configurations c ON c.key = r.configuration_key
WHERE r.value IS NOT NULL
UNION ALL
SELECT run_key, metric, value FROM run_values;
