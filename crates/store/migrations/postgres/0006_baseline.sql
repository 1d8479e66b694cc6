-- Schema version 6 of a vernier PostgreSQL database, created whole: PostgreSQL support began
-- at version 6, so versions 1 to 5 never existed in this engine. Documented in docs/schema.md.
--
-- The tables and columns are SQLite's (migrations/sqlite/0001 to 0006) in PostgreSQL's types,
-- so that every query is the same text in both engines:
-- - integers are BIGINT (SQLite's INTEGER is 64-bit), REAL is DOUBLE PRECISION, BLOB is BYTEA,
--   and the 0/1 flags are BOOLEAN;
-- - JSON stays TEXT (the exact text written, as in SQLite), checked by a cast to json;
-- - `rowid` is an identity column where queries order by insertion (SQLite's implicit rowid);
-- - text that queries order by is COLLATE "C", byte order as SQLite's BINARY, whatever the
--   database's locale.

CREATE TABLE sessions (
    rowid             BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE,
    id                TEXT    NOT NULL PRIMARY KEY,
    started_at_ns     BIGINT  NOT NULL,
    ended_at_ns       BIGINT,
    status            TEXT    NOT NULL,
    suite             TEXT,
    specs             TEXT    NOT NULL CHECK (specs::json IS NOT NULL),
    note              TEXT,
    settings          TEXT    NOT NULL CHECK (settings::json IS NOT NULL),
    vernier_version   TEXT    NOT NULL,
    fingerprint       TEXT    NOT NULL,
    environment       TEXT    NOT NULL CHECK (environment::json IS NOT NULL),
    findings          TEXT    NOT NULL DEFAULT '[]' CHECK (findings::json IS NOT NULL),
    setup             TEXT    NOT NULL DEFAULT '[]' CHECK (setup::json IS NOT NULL),
    monitors          TEXT    NOT NULL DEFAULT '[]' CHECK (monitors::json IS NOT NULL),
    owner_pid         BIGINT  CHECK (owner_pid > 0),
    owner_boot_id     TEXT,
    owner_start_ticks BIGINT  CHECK (owner_start_ticks >= 0)
);

CREATE INDEX sessions_by_start ON sessions (started_at_ns);
CREATE INDEX sessions_by_fingerprint ON sessions (fingerprint, started_at_ns);

CREATE TABLE session_tags (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);

CREATE INDEX session_tags_by_tag ON session_tags (key, value, session_id);

CREATE TABLE configurations (
    id                TEXT    NOT NULL PRIMARY KEY,
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

CREATE INDEX configurations_by_benchmark ON configurations (benchmark, options);

CREATE TABLE runs (
    rowid                BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE,
    id                   TEXT    NOT NULL PRIMARY KEY,
    configuration_id     TEXT    NOT NULL REFERENCES configurations (id) ON DELETE CASCADE,
    idx                  BIGINT  NOT NULL CHECK (idx >= 0),
    warmup               BOOLEAN NOT NULL,
    round                BIGINT  NOT NULL CHECK (round >= 0),
    preceding_executions BIGINT  NOT NULL CHECK (preceding_executions >= 0),
    started_at_ns        BIGINT  NOT NULL,
    ended_at_ns          BIGINT  NOT NULL,
    user_cpu_ns          BIGINT  NOT NULL,
    system_cpu_ns        BIGINT  NOT NULL,
    voluntary_cs         BIGINT  NOT NULL,
    involuntary_cs       BIGINT  NOT NULL,
    max_rss_bytes        BIGINT  NOT NULL,
    foreign_cpu_ns       BIGINT  NOT NULL,
    controller_cpu_ns    BIGINT  NOT NULL,
    setup_steps          TEXT    NOT NULL DEFAULT '[]' CHECK (setup_steps::json IS NOT NULL),
    load_cpu_ns          BIGINT,
    UNIQUE (configuration_id, warmup, idx)
);

CREATE INDEX runs_by_configuration ON runs (configuration_id, started_at_ns);

CREATE TABLE run_values (
    run_id TEXT             NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric TEXT             NOT NULL,
    value  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, metric)
);

CREATE TABLE kernel_configs (
    sha256 TEXT PRIMARY KEY,
    text   TEXT NOT NULL
);

CREATE TABLE calibrations (
    rowid         BIGINT           GENERATED ALWAYS AS IDENTITY UNIQUE,
    id            TEXT             NOT NULL PRIMARY KEY,
    created_at_ns BIGINT           NOT NULL,
    fingerprint   TEXT             NOT NULL,
    benchmark     TEXT COLLATE "C" NOT NULL,
    options       TEXT COLLATE "C" NOT NULL CHECK (options::json IS NOT NULL),
    metric        TEXT COLLATE "C" NOT NULL,
    sessions      BIGINT           NOT NULL CHECK (sessions >= 2),
    runs          BIGINT           NOT NULL CHECK (runs >= sessions),
    session_sd    DOUBLE PRECISION NOT NULL CHECK (session_sd >= 0),
    within_sd     DOUBLE PRECISION NOT NULL CHECK (within_sd >= 0),
    between_sd    DOUBLE PRECISION NOT NULL CHECK (between_sd >= 0),
    df            DOUBLE PRECISION NOT NULL CHECK (df > 0),
    session_ids   TEXT             NOT NULL CHECK (session_ids::json IS NOT NULL)
);

CREATE INDEX calibrations_by_configuration
    ON calibrations (fingerprint, benchmark, options, metric, created_at_ns);

CREATE TABLE monitor_names (
    id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT   NOT NULL UNIQUE
);

CREATE TABLE run_monitors (
    run_id           TEXT   NOT NULL PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    sampler_priority TEXT   NOT NULL,
    sampler_cpu_ns   BIGINT NOT NULL,
    rounds           BIGINT NOT NULL CHECK (rounds >= 0),
    unsupported      TEXT   NOT NULL CHECK (unsupported::json IS NOT NULL),
    failures         TEXT   NOT NULL CHECK (failures::json IS NOT NULL),
    series           BYTEA  NOT NULL,
    summary          BYTEA  NOT NULL
);

CREATE TABLE run_histograms (
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
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
    PRIMARY KEY (run_id, quantity, thread)
);
