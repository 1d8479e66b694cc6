-- Kept summaries of long sessions (schema version 15): for each configuration, quantity and
-- measurement thread, the buckets of every measured run's histogram merged (HdrHistogram V2 +
-- DEFLATE, as run_histograms.buckets), with the runs and samples they hold. Updated in the
-- transaction that stores runs, so that `show` of a latency monitor's session of 100,000
-- runs reads one row per thread instead of decoding every run's buckets. A table and a
-- nullable column of their own: a vernier of version 14 reads every session as before. The
-- rows of the sessions stored before it are computed from their runs' histograms after this
-- SQL, in the same transaction (crates/store/src/records/totals.rs).

CREATE TABLE histogram_totals (
    configuration_key INTEGER NOT NULL REFERENCES configurations (key) ON DELETE CASCADE,
    quantity          TEXT    NOT NULL,
    thread            INTEGER NOT NULL CHECK (thread >= 0),
    runs              INTEGER NOT NULL CHECK (runs >= 0),
    count             INTEGER NOT NULL CHECK (count >= 0),
    buckets           BLOB    NOT NULL,
    PRIMARY KEY (configuration_key, quantity, thread)
) STRICT, WITHOUT ROWID;

-- A session that `vernier sync` stores part by part reads as still being recorded until its
-- last part brings its end: while it does, the runs the source holds, so that `sessions` and
-- `show` say it is being copied and how far (null otherwise).
ALTER TABLE sessions ADD COLUMN copying_runs INTEGER CHECK (copying_runs >= 0);
