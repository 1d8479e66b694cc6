-- The machine each session ran on (schema version 7): migrations/sqlite/0007_session_machine.sql
-- in PostgreSQL's words (the one difference: reading a field of JSON text).
ALTER TABLE sessions ADD COLUMN hostname TEXT;
ALTER TABLE sessions ADD COLUMN machine_id TEXT;
UPDATE sessions SET
    hostname = environment::json ->> 'hostname',
    machine_id = environment::json ->> 'machine_id';

CREATE INDEX sessions_by_hostname ON sessions (hostname, started_at_ns);
CREATE INDEX sessions_by_machine_id ON sessions (machine_id, started_at_ns);
