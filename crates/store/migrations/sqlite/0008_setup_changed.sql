-- Runs measured while a value that their session's setup set had been changed by something
-- else (schema version 8).
--
-- A session checks, right before and right after every measured run, that each file its setup
-- wrote (a sysctl, a CPU's governor) still holds the value it set. A run found otherwise is
-- marked here: a JSON array of {setting, set, found} (vernier_model::ChangedSetting), '[]' for
-- a run measured as set up (every run recorded before version 8).
ALTER TABLE runs ADD COLUMN setup_changed TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(setup_changed));
