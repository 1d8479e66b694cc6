-- Kept summaries of long sessions (schema version 15); see the SQLite migration of the same
-- name. `vernier db migrate` computes the rows of the sessions stored before it after this
-- SQL, in a transaction of its own.

CREATE TABLE histogram_totals (
    configuration_key BIGINT NOT NULL REFERENCES configurations (key) ON DELETE CASCADE,
    quantity          TEXT COLLATE "C" NOT NULL,
    thread            BIGINT NOT NULL CHECK (thread >= 0),
    runs              BIGINT NOT NULL CHECK (runs >= 0),
    count             BIGINT NOT NULL CHECK (count >= 0),
    buckets           BYTEA  NOT NULL,
    PRIMARY KEY (configuration_key, quantity, thread)
);

ALTER TABLE sessions ADD COLUMN copying_runs BIGINT CHECK (copying_runs >= 0);
