-- How far each configuration has been recorded (schema version 12): its runs and the end of
-- the latest, kept by every write of runs in the same transaction (crates/store/src/records/
-- write.rs, add_runs). `vernier sync` compares them between a machine's database and the
-- central one to learn, without reading a session's runs, that a session still being recorded
-- (a latency monitor's, 100,000 runs a year) has nothing new. Columns with defaults only: a
-- vernier of version 11 reads the database as before.

ALTER TABLE configurations ADD COLUMN run_count BIGINT NOT NULL DEFAULT 0 CHECK (run_count >= 0);
ALTER TABLE configurations ADD COLUMN last_run_ended_ns BIGINT;

UPDATE configurations SET
    run_count = (SELECT count(*) FROM runs r WHERE r.configuration_key = configurations.key),
    last_run_ended_ns =
        (SELECT max(r.ended_at_ns) FROM runs r WHERE r.configuration_key = configurations.key);
