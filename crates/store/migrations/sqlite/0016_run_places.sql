-- A run is stored by its place (schema version 16): a hyperfine time took 112 bytes, of which
-- the unique index of the runs' ids 31 and the id itself 16 (bench/store-scale.sh). A run's
-- id is now the one its place gives, a UUID of version 8 hashed from its configuration's id,
-- its kind and its index (vernier_model::RunPlace::derived_id, docs/schema.md), kept only when
-- it is another (the runs stored before this version, and imported runs whose ids were made
-- otherwise): in `run_ids`, unique there. What the key holds (configuration_key, warmup, idx)
-- and what follows from other columns (ended_at_ns, a preceding_executions equal to idx, an
-- empty '[]' list) are generated columns, computed when read and never stored, so every query
-- of version 15 reads them as before; only `runs.id` is gone.
--
-- SQLite cannot change a table's columns in place: `runs` is built anew and filled from the
-- old one, with the foreign keys off during the migration (crates/store/src/sqlite/
-- migrations.rs; https://www.sqlite.org/lang_altertable.html#otheralter), so that dropping the
-- old table deletes nothing below it and the tables below name the new one. The view and the
-- trigger that name `runs` are made again after it.

CREATE TABLE runs_v16 (
    key                         INTEGER PRIMARY KEY CHECK (key >= 4294967296),
    round                       INTEGER NOT NULL CHECK (round >= 0),
    preceding_executions_stored INTEGER CHECK (preceding_executions_stored >= 0),
    started_at_ns               INTEGER NOT NULL,
    elapsed_ns                  INTEGER NOT NULL,
    value                       REAL,
    user_cpu_ns                 INTEGER NOT NULL,
    system_cpu_ns               INTEGER NOT NULL,
    voluntary_cs                INTEGER NOT NULL,
    involuntary_cs              INTEGER NOT NULL,
    max_rss_bytes               INTEGER NOT NULL,
    foreign_cpu_ns              INTEGER NOT NULL,
    controller_cpu_ns           INTEGER NOT NULL,
    load_cpu_ns                 INTEGER,
    setup_steps_stored          TEXT,
    setup_changed_stored        TEXT CHECK (json_valid(setup_changed_stored)),
    configuration_key    INTEGER GENERATED ALWAYS AS (key >> 32) VIRTUAL,
    warmup               INTEGER GENERATED ALWAYS AS ((key >> 31) & 1) VIRTUAL,
    idx                  INTEGER GENERATED ALWAYS AS (key & 2147483647) VIRTUAL,
    preceding_executions INTEGER GENERATED ALWAYS AS
                             (coalesce(preceding_executions_stored, key & 2147483647)) VIRTUAL,
    ended_at_ns          INTEGER GENERATED ALWAYS AS (started_at_ns + elapsed_ns) VIRTUAL,
    setup_steps          TEXT GENERATED ALWAYS AS (coalesce(setup_steps_stored, '[]')) VIRTUAL,
    setup_changed        TEXT GENERATED ALWAYS AS (coalesce(setup_changed_stored, '[]')) VIRTUAL
) STRICT;

INSERT INTO runs_v16 (key, round, preceding_executions_stored, started_at_ns, elapsed_ns, value,
    user_cpu_ns, system_cpu_ns, voluntary_cs, involuntary_cs, max_rss_bytes, foreign_cpu_ns,
    controller_cpu_ns, load_cpu_ns, setup_steps_stored, setup_changed_stored)
SELECT key, round, nullif(preceding_executions, idx), started_at_ns,
    ended_at_ns - started_at_ns, value, user_cpu_ns, system_cpu_ns, voluntary_cs,
    involuntary_cs, max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, load_cpu_ns,
    nullif(setup_steps, '[]'), nullif(setup_changed, '[]')
FROM runs ORDER BY key;

-- The ids of the runs stored so far: every one of them (none was made from its place).
CREATE TABLE run_ids (
    run_key INTEGER PRIMARY KEY REFERENCES runs (key) ON DELETE CASCADE,
    id      BLOB    NOT NULL UNIQUE CHECK (length(id) = 16)
) STRICT;

INSERT INTO run_ids (run_key, id) SELECT key, id FROM runs ORDER BY key;

DROP VIEW run_metric_values;
DROP TRIGGER runs_of_deleted_configuration;
DROP TABLE runs;
ALTER TABLE runs_v16 RENAME TO runs;

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
