-- A run's key says where it belongs (schema version 14): configuration_key * 2^32 +
-- warmup * 2^31 + idx, so that the runs of a configuration are one range of the primary key
-- (migrations/sqlite/0014_run_keys.sql says why). The unique constraint of
-- (configuration_key, warmup, idx) and the foreign key from runs to configurations go: the key
-- keeps the three unique, and the trigger `runs_of_deleted_configuration` deletes a deleted
-- configuration's runs as the range of their keys. PostgreSQL changes the keys in place: the
-- foreign keys that name runs (key) are dropped, every key is rewritten (the new keys are at
-- least 2^32, past every identity value the old ones took, so no row meets another's key on
-- the way), and the foreign keys are made again.

DO $$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT conname, conrelid::regclass AS tbl FROM pg_constraint
        WHERE conrelid = 'runs'::regclass AND contype IN ('f', 'u')
          AND conkey <> ARRAY[(SELECT attnum FROM pg_attribute
                                WHERE attrelid = 'runs'::regclass AND attname = 'id')]
        UNION ALL
        SELECT conname, conrelid::regclass FROM pg_constraint
        WHERE confrelid = 'runs'::regclass AND contype = 'f'
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.tbl, c.conname);
    END LOOP;
END
$$;

ALTER TABLE runs ALTER COLUMN key DROP IDENTITY;

CREATE TEMP TABLE run_keys_v14 ON COMMIT DROP AS
SELECT key AS old,
       configuration_key * 4294967296 + (CASE WHEN warmup THEN 2147483648 ELSE 0 END) + idx
           AS new
FROM runs;
ALTER TABLE run_keys_v14 ADD PRIMARY KEY (old);

UPDATE runs r SET key = k.new FROM run_keys_v14 k WHERE k.old = r.key;
UPDATE run_values x SET run_key = k.new FROM run_keys_v14 k WHERE k.old = x.run_key;
UPDATE run_histograms x SET run_key = k.new FROM run_keys_v14 k WHERE k.old = x.run_key;
UPDATE run_traces x SET run_key = k.new FROM run_keys_v14 k WHERE k.old = x.run_key;
UPDATE run_monitors x SET run_key = k.new FROM run_keys_v14 k WHERE k.old = x.run_key;

ALTER TABLE runs
    ADD CONSTRAINT runs_key_place
        CHECK (key = configuration_key * 4294967296
                     + (CASE WHEN warmup THEN 2147483648 ELSE 0 END) + idx),
    ADD CONSTRAINT runs_configuration_key_range
        CHECK (configuration_key BETWEEN 1 AND 2147483647),
    ADD CONSTRAINT runs_idx_range CHECK (idx BETWEEN 0 AND 2147483647);
ALTER TABLE run_values ADD FOREIGN KEY (run_key) REFERENCES runs (key) ON DELETE CASCADE;
ALTER TABLE run_histograms ADD FOREIGN KEY (run_key) REFERENCES runs (key) ON DELETE CASCADE;
ALTER TABLE run_traces ADD FOREIGN KEY (run_key) REFERENCES runs (key) ON DELETE CASCADE;
ALTER TABLE run_monitors ADD FOREIGN KEY (run_key) REFERENCES runs (key) ON DELETE CASCADE;

CREATE FUNCTION delete_runs_of_configuration() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM runs
    WHERE key >= OLD.key * 4294967296 AND key < (OLD.key + 1) * 4294967296;
    RETURN OLD;
END
$$;

CREATE TRIGGER runs_of_deleted_configuration AFTER DELETE ON configurations
FOR EACH ROW EXECUTE FUNCTION delete_runs_of_configuration();
