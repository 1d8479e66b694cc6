-- Bisections (schema version 11); see the SQLite migration of the same name.

CREATE TABLE bisections (
    id            TEXT   NOT NULL PRIMARY KEY,
    created_at_ns BIGINT NOT NULL,
    definition    TEXT   NOT NULL
);
