-- Distribution-valued results, secondary metrics and load profiles (schema version 6).
--
-- A latency run takes millions of samples per measurement thread; each thread's distribution
-- is one row of run_histograms (vernier_model::histogram::RunHistogram): the exact facts in
-- columns, the buckets in HdrHistogram's V2 + DEFLATE encoding. The summaries a benchmark
-- derives from them (p99, max, ...) are ordinary rows of run_values.

CREATE TABLE run_histograms (
    run_id    TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    -- What was sampled, for example `latency`.
    quantity  TEXT    NOT NULL,
    thread    INTEGER NOT NULL CHECK (thread >= 0),
    -- The CPU the thread was pinned to; NULL when it was not pinned.
    cpu       INTEGER CHECK (cpu >= 0),
    count     INTEGER NOT NULL CHECK (count >= 0),
    min_ns    INTEGER NOT NULL CHECK (min_ns >= 0),
    max_ns    INTEGER NOT NULL CHECK (max_ns >= 0),
    -- Index of the sample that was the maximum, when known.
    max_index INTEGER CHECK (max_index >= 0),
    sum_ns    INTEGER NOT NULL CHECK (sum_ns >= 0),
    overflows INTEGER NOT NULL CHECK (overflows >= 0),
    missed    INTEGER NOT NULL CHECK (missed >= 0),
    -- The non-empty buckets, HdrHistogram V2 + DEFLATE (docs/schema.md, "Histograms").
    buckets   BLOB    NOT NULL,
    PRIMARY KEY (run_id, quantity, thread)
) STRICT, WITHOUT ROWID;

-- Further metrics of a configuration besides the primary one: JSON array of
-- {name, unit, higher_is_better}.
ALTER TABLE configurations ADD COLUMN secondary_metrics TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(secondary_metrics));
-- The load profiles running during every measured run: JSON array of canonical specs.
ALTER TABLE configurations ADD COLUMN loads TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(loads));
-- CPU time of the load profiles during the run; NULL when no load ran.
ALTER TABLE runs ADD COLUMN load_cpu_ns INTEGER;
