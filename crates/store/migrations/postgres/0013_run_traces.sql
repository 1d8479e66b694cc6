-- Traced worst-case latencies (schema version 13); see the SQLite migration of the same name.

CREATE TABLE run_traces (
    run_key    BIGINT NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
    quantity   TEXT COLLATE "C" NOT NULL,
    thread     BIGINT NOT NULL CHECK (thread >= 0),
    latency_ns BIGINT NOT NULL CHECK (latency_ns >= 0),
    events     BIGINT NOT NULL CHECK (events >= 0),
    trace      BYTEA  NOT NULL,
    PRIMARY KEY (run_key, quantity, thread)
);
