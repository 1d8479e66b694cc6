-- Schema version 18: in PostgreSQL, `run_ids.run_key` is no longer a foreign key of `runs.key`;
-- a statement trigger on `runs` deletes the ids of the runs deleted, as the key's
-- `ON DELETE CASCADE` did. A foreign key is checked row by row: each row written to `run_ids`
-- locks its run's row (`SELECT ... FOR KEY SHARE`, which writes the lock into that row): the
-- `COPY` of the 100,000 ids of a session stored before version 16 into such a table took
-- 0.64 s, against 0.24-0.30 s without the key (0.10 s without its unique index too), most of
-- the sync of such a session (bench/farm-copy.sh: 1.59-1.70 s before, 1.17-1.26 s after, on
-- the 2-vCPU KVM guest). vernier writes a run's ids in the
-- transaction that writes the run, after it (crates/store/src/records/write.rs). The trigger
-- fires once per statement that deletes runs (the deletion of a configuration's runs is one),
-- with the deleted rows as a transition table
-- (https://www.postgresql.org/docs/15/sql-createtrigger.html).
--
-- SQLite keeps the foreign key: there a check is one lookup in the run's table and writes
-- nothing. Its migration of this version (migrations/sqlite/0018_run_ids_and_histograms.sql)
-- makes `run_histograms` a table with rowids instead, so that a histogram's row stays on its
-- page; PostgreSQL's heap tables have no such limit. The two engines share the version.

ALTER TABLE run_ids DROP CONSTRAINT run_ids_run_key_fkey;

CREATE FUNCTION delete_ids_of_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_ids WHERE run_key IN (SELECT key FROM deleted_runs);
    RETURN NULL;
END
$$;

CREATE TRIGGER ids_of_deleted_runs AFTER DELETE ON runs
REFERENCING OLD TABLE AS deleted_runs
FOR EACH STATEMENT EXECUTE FUNCTION delete_ids_of_runs();
