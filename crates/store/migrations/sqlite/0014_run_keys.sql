-- A run's key says where it belongs (schema version 14): configuration_key * 2^32 +
-- warmup * 2^31 + idx, so that the runs of a configuration are one range of the table's key
-- and the table itself finds them. Version 13 numbered the runs in the order they were stored
-- and kept a unique index of (configuration_key, warmup, idx) to find a configuration's runs:
-- 15 of the 129 bytes of a hyperfine time, and one of the two indexes every stored run
-- descended into. The key keeps (configuration_key, warmup, idx) unique.
--
-- Without that index a foreign key from runs to configurations would make SQLite look for a
-- deleted configuration's runs by reading the whole table
-- (https://www.sqlite.org/foreignkeys.html#fk_indexes); the trigger
-- `runs_of_deleted_configuration` deletes them as the range of their keys instead, with their
-- values, histograms, traces and monitor data (their own foreign keys cascade from runs).
--
-- The runs and the tables below them are built anew with the new keys and filled from the old
-- ones (SQLite cannot change a primary key in place), children first dropped, then renamed, as
-- in migration 0009.

CREATE TABLE runs_v14 (
    key                  INTEGER PRIMARY KEY
                                 CHECK (key = configuration_key * 4294967296
                                              + warmup * 2147483648 + idx),
    id                   BLOB    NOT NULL UNIQUE CHECK (length(id) = 16),
    configuration_key    INTEGER NOT NULL CHECK (configuration_key BETWEEN 1 AND 2147483647),
    idx                  INTEGER NOT NULL CHECK (idx BETWEEN 0 AND 2147483647),
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
    setup_changed        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(setup_changed))
) STRICT;

-- Old key -> new key, for the tables below the runs.
CREATE TEMP TABLE run_keys_v14 (old INTEGER PRIMARY KEY, new INTEGER NOT NULL) STRICT;
INSERT INTO run_keys_v14 (old, new)
SELECT key, configuration_key * 4294967296 + warmup * 2147483648 + idx FROM runs;

INSERT INTO runs_v14 (key, id, configuration_key, idx, warmup, round, preceding_executions,
    started_at_ns, ended_at_ns, value, user_cpu_ns, system_cpu_ns, voluntary_cs,
    involuntary_cs, max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, load_cpu_ns, setup_steps,
    setup_changed)
SELECT k.new, r.id, r.configuration_key, r.idx, r.warmup, r.round, r.preceding_executions,
    r.started_at_ns, r.ended_at_ns, r.value, r.user_cpu_ns, r.system_cpu_ns, r.voluntary_cs,
    r.involuntary_cs, r.max_rss_bytes, r.foreign_cpu_ns, r.controller_cpu_ns, r.load_cpu_ns,
    r.setup_steps, r.setup_changed
FROM runs r JOIN run_keys_v14 k ON k.old = r.key ORDER BY k.new;

CREATE TABLE run_values_v14 (
    run_key INTEGER NOT NULL REFERENCES runs_v14 (key) ON DELETE CASCADE,
    metric  TEXT    NOT NULL,
    value   REAL    NOT NULL,
    PRIMARY KEY (run_key, metric)
) STRICT, WITHOUT ROWID;

INSERT INTO run_values_v14 (run_key, metric, value)
SELECT k.new, v.metric, v.value FROM run_values v JOIN run_keys_v14 k ON k.old = v.run_key
ORDER BY k.new, v.metric;

CREATE TABLE run_histograms_v14 (
    run_key   INTEGER NOT NULL REFERENCES runs_v14 (key) ON DELETE CASCADE,
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

INSERT INTO run_histograms_v14 (run_key, quantity, thread, cpu, count, min_ns, max_ns,
    max_index, sum_ns, overflows, missed, buckets)
SELECT k.new, h.quantity, h.thread, h.cpu, h.count, h.min_ns, h.max_ns, h.max_index,
    h.sum_ns, h.overflows, h.missed, h.buckets
FROM run_histograms h JOIN run_keys_v14 k ON k.old = h.run_key
ORDER BY k.new, h.quantity, h.thread;

CREATE TABLE run_traces_v14 (
    run_key    INTEGER NOT NULL REFERENCES runs_v14 (key) ON DELETE CASCADE,
    quantity   TEXT    NOT NULL,
    thread     INTEGER NOT NULL CHECK (thread >= 0),
    latency_ns INTEGER NOT NULL CHECK (latency_ns >= 0),
    events     INTEGER NOT NULL CHECK (events >= 0),
    trace      BLOB    NOT NULL,
    PRIMARY KEY (run_key, quantity, thread)
) STRICT, WITHOUT ROWID;

INSERT INTO run_traces_v14 (run_key, quantity, thread, latency_ns, events, trace)
SELECT k.new, t.quantity, t.thread, t.latency_ns, t.events, t.trace
FROM run_traces t JOIN run_keys_v14 k ON k.old = t.run_key
ORDER BY k.new, t.quantity, t.thread;

CREATE TABLE run_monitors_v14 (
    run_key          INTEGER PRIMARY KEY REFERENCES runs_v14 (key) ON DELETE CASCADE,
    sampler_priority TEXT    NOT NULL,
    sampler_cpu_ns   INTEGER NOT NULL,
    rounds           INTEGER NOT NULL CHECK (rounds >= 0),
    unsupported      TEXT    NOT NULL CHECK (json_valid(unsupported)),
    failures         TEXT    NOT NULL CHECK (json_valid(failures)),
    series           BLOB    NOT NULL,
    summary          BLOB    NOT NULL
) STRICT;

INSERT INTO run_monitors_v14 (run_key, sampler_priority, sampler_cpu_ns, rounds, unsupported,
    failures, series, summary)
SELECT k.new, m.sampler_priority, m.sampler_cpu_ns, m.rounds, m.unsupported, m.failures,
    m.series, m.summary
FROM run_monitors m JOIN run_keys_v14 k ON k.old = m.run_key ORDER BY k.new;

-- The view names runs: dropped before it, made again after.
DROP VIEW run_metric_values;
-- Children before parents, so that no drop cascades into a table still to be copied.
DROP TABLE run_monitors;
DROP TABLE run_traces;
DROP TABLE run_histograms;
DROP TABLE run_values;
DROP TABLE runs;
DROP TABLE run_keys_v14;
ALTER TABLE runs_v14 RENAME TO runs;
ALTER TABLE run_values_v14 RENAME TO run_values;
ALTER TABLE run_histograms_v14 RENAME TO run_histograms;
ALTER TABLE run_traces_v14 RENAME TO run_traces;
ALTER TABLE run_monitors_v14 RENAME TO run_monitors;

CREATE TRIGGER runs_of_deleted_configuration AFTER DELETE ON configurations
BEGIN
    DELETE FROM runs WHERE key >= old.key * 4294967296 AND key < (old.key + 1) * 4294967296;
END;

CREATE VIEW run_metric_values AS
SELECT r.key AS run_key, c.metric AS metric, r.value AS value
FROM runs r JOIN configurations c ON c.key = r.configuration_key
WHERE r.value IS NOT NULL
UNION ALL
SELECT run_key, metric, value FROM run_values;
