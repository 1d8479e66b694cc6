-- Bisections (schema version 11, `vernier bisect`, docs/bisect.md): one row per bisection in
-- progress or finished and not reset. Its measurements are ordinary sessions tagged
-- `bisect=ID` and `commit=SHA`; `definition` is what they cannot say (the range of commits,
-- the build and boot commands, the specs, settings and budget, the commits whose build
-- failed) as the JSON of vernier_model::Bisection. A table of its own: a vernier of version
-- 10 reads every session as before.

CREATE TABLE bisections (
    id            TEXT    NOT NULL PRIMARY KEY,
    created_at_ns INTEGER NOT NULL,
    definition    TEXT    NOT NULL
) STRICT;
