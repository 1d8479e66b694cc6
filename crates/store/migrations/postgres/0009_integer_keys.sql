-- Integer keys inside the database, run ids in 16 bytes, the primary value in the run's row
-- (schema version 9): migrations/sqlite/0009_integer_keys.sql in PostgreSQL's words.
--
-- Configurations and runs get a `key` (BIGINT, GENERATED ALWAYS AS IDENTITY, the primary key)
-- that the tables below them refer to; the runs keep their `rowid` as key, so the order of
-- insertion is kept, and the identity continues after the largest. A run's UUID is its 16
-- bytes (BYTEA).

CREATE TABLE configurations_v9 (
    key               BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,
    session_id        TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position          BIGINT  NOT NULL CHECK (position >= 0),
    benchmark         TEXT    NOT NULL,
    benchmark_version TEXT    NOT NULL,
    options           TEXT    NOT NULL CHECK (options::json IS NOT NULL),
    metric            TEXT    NOT NULL,
    unit              TEXT    NOT NULL,
    higher_is_better  BOOLEAN NOT NULL,
    stop_reason       TEXT,
    converged         BOOLEAN NOT NULL DEFAULT FALSE,
    error             TEXT,
    secondary_metrics TEXT    NOT NULL DEFAULT '[]' CHECK (secondary_metrics::json IS NOT NULL),
    loads             TEXT    NOT NULL DEFAULT '[]' CHECK (loads::json IS NOT NULL),
    UNIQUE (session_id, position)
);

INSERT INTO configurations_v9 (id, session_id, position, benchmark, benchmark_version,
    options, metric, unit, higher_is_better, stop_reason, converged, error, secondary_metrics,
    loads)
SELECT c.id, c.session_id, c.position, c.benchmark, c.benchmark_version, c.options, c.metric,
    c.unit, c.higher_is_better, c.stop_reason, c.converged, c.error, c.secondary_metrics,
    c.loads
FROM configurations c JOIN sessions s ON s.id = c.session_id
ORDER BY s.rowid, c.position;

CREATE TABLE runs_v9 (
    key                  BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                   BYTEA   NOT NULL UNIQUE CHECK (length(id) = 16),
    configuration_key    BIGINT  NOT NULL
                                 REFERENCES configurations_v9 (key) ON DELETE CASCADE,
    idx                  BIGINT  NOT NULL CHECK (idx >= 0),
    warmup               BOOLEAN NOT NULL,
    round                BIGINT  NOT NULL CHECK (round >= 0),
    preceding_executions BIGINT  NOT NULL CHECK (preceding_executions >= 0),
    started_at_ns        BIGINT  NOT NULL,
    ended_at_ns          BIGINT  NOT NULL,
    value                DOUBLE PRECISION,
    user_cpu_ns          BIGINT  NOT NULL,
    system_cpu_ns        BIGINT  NOT NULL,
    voluntary_cs         BIGINT  NOT NULL,
    involuntary_cs       BIGINT  NOT NULL,
    max_rss_bytes        BIGINT  NOT NULL,
    foreign_cpu_ns       BIGINT  NOT NULL,
    controller_cpu_ns    BIGINT  NOT NULL,
    load_cpu_ns          BIGINT,
    setup_steps          TEXT    NOT NULL DEFAULT '[]' CHECK (setup_steps::json IS NOT NULL),
    setup_changed        TEXT    NOT NULL DEFAULT '[]' CHECK (setup_changed::json IS NOT NULL),
    UNIQUE (configuration_key, warmup, idx)
);

INSERT INTO runs_v9 (key, id, configuration_key, idx, warmup, round, preceding_executions,
    started_at_ns, ended_at_ns, value, user_cpu_ns, system_cpu_ns, voluntary_cs, involuntary_cs,
    max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, load_cpu_ns, setup_steps, setup_changed)
OVERRIDING SYSTEM VALUE
SELECT r.rowid, decode(replace(r.id, '-', ''), 'hex'), c.key, r.idx, r.warmup, r.round,
    r.preceding_executions, r.started_at_ns, r.ended_at_ns, v.value, r.user_cpu_ns,
    r.system_cpu_ns, r.voluntary_cs, r.involuntary_cs, r.max_rss_bytes, r.foreign_cpu_ns,
    r.controller_cpu_ns, r.load_cpu_ns, r.setup_steps, r.setup_changed
FROM runs r JOIN configurations_v9 c ON c.id = r.configuration_id
LEFT JOIN run_values v ON v.run_id = r.id AND v.metric = c.metric
ORDER BY r.rowid;

SELECT setval(pg_get_serial_sequence('runs_v9', 'key'), coalesce(max(key), 0) + 1, false)
FROM runs_v9;

CREATE TABLE run_values_v9 (
    run_key BIGINT           NOT NULL REFERENCES runs_v9 (key) ON DELETE CASCADE,
    metric  TEXT             NOT NULL,
    value   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_key, metric)
);

INSERT INTO run_values_v9 (run_key, metric, value)
SELECT r.rowid, v.metric, v.value
FROM run_values v JOIN runs r ON r.id = v.run_id JOIN configurations c ON c.id = r.configuration_id
WHERE v.metric <> c.metric;

CREATE TABLE run_histograms_v9 (
    run_key   BIGINT NOT NULL REFERENCES runs_v9 (key) ON DELETE CASCADE,
    quantity  TEXT COLLATE "C" NOT NULL,
    thread    BIGINT NOT NULL CHECK (thread >= 0),
    cpu       BIGINT CHECK (cpu >= 0),
    count     BIGINT NOT NULL CHECK (count >= 0),
    min_ns    BIGINT NOT NULL CHECK (min_ns >= 0),
    max_ns    BIGINT NOT NULL CHECK (max_ns >= 0),
    max_index BIGINT CHECK (max_index >= 0),
    sum_ns    BIGINT NOT NULL CHECK (sum_ns >= 0),
    overflows BIGINT NOT NULL CHECK (overflows >= 0),
    missed    BIGINT NOT NULL CHECK (missed >= 0),
    buckets   BYTEA  NOT NULL,
    PRIMARY KEY (run_key, quantity, thread)
);

INSERT INTO run_histograms_v9 (run_key, quantity, thread, cpu, count, min_ns, max_ns,
    max_index, sum_ns, overflows, missed, buckets)
SELECT r.rowid, h.quantity, h.thread, h.cpu, h.count, h.min_ns, h.max_ns, h.max_index,
    h.sum_ns, h.overflows, h.missed, h.buckets
FROM run_histograms h JOIN runs r ON r.id = h.run_id;

CREATE TABLE run_monitors_v9 (
    run_key          BIGINT NOT NULL PRIMARY KEY REFERENCES runs_v9 (key) ON DELETE CASCADE,
    sampler_priority TEXT   NOT NULL,
    sampler_cpu_ns   BIGINT NOT NULL,
    rounds           BIGINT NOT NULL CHECK (rounds >= 0),
    unsupported      TEXT   NOT NULL CHECK (unsupported::json IS NOT NULL),
    failures         TEXT   NOT NULL CHECK (failures::json IS NOT NULL),
    series           BYTEA  NOT NULL,
    summary          BYTEA  NOT NULL
);

INSERT INTO run_monitors_v9 (run_key, sampler_priority, sampler_cpu_ns, rounds, unsupported,
    failures, series, summary)
SELECT r.rowid, m.sampler_priority, m.sampler_cpu_ns, m.rounds, m.unsupported, m.failures,
    m.series, m.summary
FROM run_monitors m JOIN runs r ON r.id = m.run_id;

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

CREATE INDEX configurations_by_benchmark ON configurations (benchmark, options);

-- Every metric value of every run, the primary one included, as version 8's run_values held
-- them (with the run's key instead of its id): what a query by hand reads most easily.
CREATE VIEW run_metric_values AS
SELECT r.key AS run_key, c.metric AS metric, r.value AS value
FROM runs r JOIN configurations c ON c.key = r.configuration_key
WHERE r.value IS NOT NULL
UNION ALL
SELECT run_key, metric, value FROM run_values;
