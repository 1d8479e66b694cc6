-- A run is stored by its place (schema version 16; migrations/sqlite/0016_run_places.sql says
-- why): its id only when it is not the one its place gives (`run_ids`), and what the key holds
-- or other columns give as generated columns. PostgreSQL's generated columns are stored
-- (computed when a row is written), so its rows keep their size; every query and every
-- insertion is one text for both engines. The table is changed in place: the ids of the runs
-- stored so far go to `run_ids`, the columns that become generated are dropped and made again.

DROP VIEW run_metric_values;

CREATE TABLE run_ids (
    run_key BIGINT NOT NULL PRIMARY KEY REFERENCES runs (key) ON DELETE CASCADE,
    id      BYTEA  NOT NULL UNIQUE CHECK (length(id) = 16)
);

INSERT INTO run_ids (run_key, id) SELECT key, id FROM runs;

ALTER TABLE runs RENAME COLUMN preceding_executions TO preceding_executions_stored;
ALTER TABLE runs RENAME COLUMN setup_steps TO setup_steps_stored;
ALTER TABLE runs RENAME COLUMN setup_changed TO setup_changed_stored;
-- Their JSON checks took NULL for invalid: they take it now for an empty list.
ALTER TABLE runs
    DROP CONSTRAINT IF EXISTS runs_v9_setup_steps_check,
    DROP CONSTRAINT IF EXISTS runs_v9_setup_changed_check,
    ADD CONSTRAINT runs_setup_steps_json
        CHECK (setup_steps_stored IS NULL OR setup_steps_stored::json IS NOT NULL),
    ADD CONSTRAINT runs_setup_changed_json
        CHECK (setup_changed_stored IS NULL OR setup_changed_stored::json IS NOT NULL),
    ALTER COLUMN preceding_executions_stored DROP NOT NULL,
    ALTER COLUMN setup_steps_stored DROP NOT NULL,
    ALTER COLUMN setup_steps_stored DROP DEFAULT,
    ALTER COLUMN setup_changed_stored DROP NOT NULL,
    ALTER COLUMN setup_changed_stored DROP DEFAULT,
    ADD COLUMN elapsed_ns BIGINT;

UPDATE runs SET elapsed_ns = ended_at_ns - started_at_ns,
    preceding_executions_stored = nullif(preceding_executions_stored, idx),
    setup_steps_stored = nullif(setup_steps_stored, '[]'),
    setup_changed_stored = nullif(setup_changed_stored, '[]');

-- The constraints that name the dropped columns (the key's place, their ranges) go with them.
ALTER TABLE runs
    ALTER COLUMN elapsed_ns SET NOT NULL,
    DROP COLUMN id,
    DROP COLUMN configuration_key,
    DROP COLUMN warmup,
    DROP COLUMN idx,
    DROP COLUMN ended_at_ns;

ALTER TABLE runs
    ADD COLUMN configuration_key BIGINT GENERATED ALWAYS AS (key >> 32) STORED,
    ADD COLUMN warmup BOOLEAN GENERATED ALWAYS AS ((key & 2147483648) <> 0) STORED,
    ADD COLUMN idx BIGINT GENERATED ALWAYS AS (key & 2147483647) STORED,
    ADD COLUMN preceding_executions BIGINT GENERATED ALWAYS AS
        (coalesce(preceding_executions_stored, key & 2147483647)) STORED,
    ADD COLUMN ended_at_ns BIGINT GENERATED ALWAYS AS (started_at_ns + elapsed_ns) STORED,
    ADD COLUMN setup_steps TEXT GENERATED ALWAYS AS (coalesce(setup_steps_stored, '[]')) STORED,
    ADD COLUMN setup_changed TEXT GENERATED ALWAYS AS
        (coalesce(setup_changed_stored, '[]')) STORED,
    ADD CONSTRAINT runs_key_range CHECK (key >= 4294967296);

CREATE VIEW run_metric_values AS
SELECT r.key AS run_key, c.metric AS metric, r.value AS value
FROM runs r JOIN configurations c ON c.key = r.configuration_key
WHERE r.value IS NOT NULL
UNION ALL
SELECT run_key, metric, value FROM run_values;
