-- The machine each session ran on (schema version 7).
--
-- Results from many machines end up in one database (`vernier sync`, `vernier merge`), and the
-- host is how a user tells them apart (`host=NAME` selectors, `sessions`). Both values are also
-- in the environment JSON; these columns are what selection and lists read without decoding
-- it, written from the environment with every session. machine_id is /etc/machine-id
-- (machine-id(5)), NULL when the machine had none; hostname NULL when it could not be read.
ALTER TABLE sessions ADD COLUMN hostname TEXT;
ALTER TABLE sessions ADD COLUMN machine_id TEXT;
UPDATE sessions SET
    hostname = json_extract(environment, '$.hostname'),
    machine_id = json_extract(environment, '$.machine_id');

-- Selection by host.
CREATE INDEX sessions_by_hostname ON sessions (hostname, started_at_ns);
CREATE INDEX sessions_by_machine_id ON sessions (machine_id, started_at_ns);
