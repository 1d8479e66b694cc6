-- Profiled runs (schema version 10): per configuration, the runs recorded under `perf record`
-- after its timed ones (`--profile`), never part of its statistics. `stacks` is the run's
-- folded stacks (a table of distinct frame names and of distinct stacks as indexes into it,
-- vernier_model::profile::FoldedStacks) as JSON compressed with DEFLATE (RFC 1951). Deleted
-- with their configuration, so with their session.

CREATE TABLE profiles (
    configuration_key INTEGER NOT NULL REFERENCES configurations (key) ON DELETE CASCADE,
    idx               INTEGER NOT NULL CHECK (idx >= 0),
    id                BLOB    NOT NULL UNIQUE CHECK (length(id) = 16),
    event             TEXT    NOT NULL,
    frequency_hz      INTEGER NOT NULL CHECK (frequency_hz > 0),
    scope             TEXT    NOT NULL CHECK (scope IN ('process', 'system')),
    started_at_ns     INTEGER NOT NULL,
    ended_at_ns       INTEGER NOT NULL,
    value             REAL,
    samples           INTEGER NOT NULL CHECK (samples >= 0),
    stacks            BLOB    NOT NULL,
    PRIMARY KEY (configuration_key, idx)
) STRICT, WITHOUT ROWID;
