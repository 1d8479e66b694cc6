-- Schema version 1 of a vernier SQLite database. Documented in docs/schema.md.
--
-- Identifiers are UUIDs as lowercase hyphenated text. Timestamps are nanoseconds since the Unix
-- epoch (`_ns`), durations nanoseconds, sizes bytes. What is queried is normalized into columns;
-- what is only carried (settings, environment, specs, options) is JSON text.
-- Tables are STRICT so a column holds only its declared type.

CREATE TABLE sessions (
    id              TEXT    NOT NULL PRIMARY KEY,
    started_at_ns   INTEGER NOT NULL,
    ended_at_ns     INTEGER,
    status          TEXT    NOT NULL,
    suite           TEXT,
    specs           TEXT    NOT NULL CHECK (json_valid(specs)),
    note            TEXT,
    settings        TEXT    NOT NULL CHECK (json_valid(settings)),
    vernier_version TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    environment     TEXT    NOT NULL CHECK (json_valid(environment))
) STRICT;

-- `latest` and `latest~N` order by start time.
CREATE INDEX sessions_by_start ON sessions (started_at_ns);
-- Sessions of one environment, for history and regression detection.
CREATE INDEX sessions_by_fingerprint ON sessions (fingerprint, started_at_ns);

CREATE TABLE session_tags (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
) STRICT, WITHOUT ROWID;

-- Selection of sessions by tag (`compare kernel=6.18 kernel=6.19`).
CREATE INDEX session_tags_by_tag ON session_tags (key, value, session_id);

CREATE TABLE configurations (
    id                TEXT    NOT NULL PRIMARY KEY,
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
    UNIQUE (session_id, position)
) STRICT;

-- The same benchmark and options across sessions (history, compare).
CREATE INDEX configurations_by_benchmark ON configurations (benchmark, options);

CREATE TABLE runs (
    id                   TEXT    NOT NULL PRIMARY KEY,
    configuration_id     TEXT    NOT NULL REFERENCES configurations (id) ON DELETE CASCADE,
    idx                  INTEGER NOT NULL CHECK (idx >= 0),
    warmup               INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    round                INTEGER NOT NULL CHECK (round >= 0),
    preceding_executions INTEGER NOT NULL CHECK (preceding_executions >= 0),
    started_at_ns        INTEGER NOT NULL,
    ended_at_ns          INTEGER NOT NULL,
    user_cpu_ns          INTEGER NOT NULL,
    system_cpu_ns        INTEGER NOT NULL,
    voluntary_cs         INTEGER NOT NULL,
    involuntary_cs       INTEGER NOT NULL,
    max_rss_bytes        INTEGER NOT NULL,
    foreign_cpu_ns       INTEGER NOT NULL,
    controller_cpu_ns    INTEGER NOT NULL,
    UNIQUE (configuration_id, warmup, idx)
) STRICT;

-- The runs of a configuration in execution order.
CREATE INDEX runs_by_configuration ON runs (configuration_id, started_at_ns);

CREATE TABLE run_values (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (run_id, metric)
) STRICT, WITHOUT ROWID;
