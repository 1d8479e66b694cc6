-- Profiled runs (schema version 10); see the SQLite migration of the same name.

CREATE TABLE profiles (
    configuration_key BIGINT           NOT NULL
                                       REFERENCES configurations (key) ON DELETE CASCADE,
    idx               BIGINT           NOT NULL CHECK (idx >= 0),
    id                BYTEA            NOT NULL UNIQUE CHECK (length(id) = 16),
    event             TEXT             NOT NULL,
    frequency_hz      BIGINT           NOT NULL CHECK (frequency_hz > 0),
    scope             TEXT             NOT NULL CHECK (scope IN ('process', 'system')),
    started_at_ns     BIGINT           NOT NULL,
    ended_at_ns       BIGINT           NOT NULL,
    value             DOUBLE PRECISION,
    samples           BIGINT           NOT NULL CHECK (samples >= 0),
    stacks            BYTEA            NOT NULL,
    PRIMARY KEY (configuration_key, idx)
);
