-- Runs measured while a value that their session's setup set had been changed by something
-- else (schema version 8): migrations/sqlite/0008_setup_changed.sql in PostgreSQL's words.
ALTER TABLE runs ADD COLUMN setup_changed TEXT NOT NULL DEFAULT '[]'
    CHECK (setup_changed::json IS NOT NULL);
