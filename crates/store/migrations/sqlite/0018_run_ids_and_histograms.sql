-- Schema version 18: `run_histograms` becomes a table with rowids, its key a unique index, and
-- the index `run_histogram_headers` holds every column but the buckets.
--
-- In a WITHOUT ROWID table a row keeps at most about a quarter of a page in the table's b-tree
-- (the maximum local payload of an index b-tree, https://www.sqlite.org/fileformat2.html
-- #b_tree_pages; SQLite advises rows below 1/20th of a page in such tables,
-- https://www.sqlite.org/withoutrowid.html#when_to_use_without_rowid), and a histogram's row
-- is about 1.5 KB (its buckets, compressed): each row spilled the rest into an overflow page
-- of its own, 4 KB mostly empty. A session of 100,000 latency intervals (two histograms each) held 893 MB in
-- `run_histograms`, 392 MB as a rowid table, where a row of up to ~4 KB stays on its leaf
-- page; its file went from 1.38 GB to 0.86 GB. Reading the runs' headers without their
-- buckets (`show` of a long session) read those leaf pages all the same: the index
-- `run_histogram_headers` (8 MB for those 200,000 rows) holds the headers apart, and `show`
-- took 0.79 s against 1.05 s.
--
-- PostgreSQL changes something else in this version (migrations/postgres/
-- 0018_run_ids_and_histograms.sql: `run_ids` without its foreign key); its heap tables have no
-- such limit. SQLite keeps that foreign key: its check is one lookup that writes nothing.
--
-- The table is built anew and filled in the order of its key; foreign keys are off during a
-- migration (crates/store/src/sqlite/migrations.rs).

CREATE TABLE run_histograms_v18 (
    run_key   INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
    quantity  TEXT    NOT NULL,
    thread    INTEGER NOT NULL CHECK (thread >= 0),
    cpu       INTEGER CHECK (cpu >= 0),
    count     INTEGER NOT NULL CHECK (count >= 0),
    min_ns    INTEGER NOT NULL CHECK (min_ns >= 0),
    max_ns    INTEGER NOT NULL CHECK (max_ns >= 0),
    max_index INTEGER CHECK (max_index >= 0),
    sum_ns    INTEGER NOT NULL CHECK (sum_ns >= 0),
    overflows INTEGER NOT NULL CHECK (overflows >= 0),
    missed    INTEGER NOT NULL CHECK (missed >= 0),
    buckets   BLOB    NOT NULL,
    PRIMARY KEY (run_key, quantity, thread)
) STRICT;

INSERT INTO run_histograms_v18 (run_key, quantity, thread, cpu, count, min_ns, max_ns,
    max_index, sum_ns, overflows, missed, buckets)
SELECT run_key, quantity, thread, cpu, count, min_ns, max_ns, max_index, sum_ns, overflows,
    missed, buckets
FROM run_histograms ORDER BY run_key, quantity, thread;

DROP TABLE run_histograms;
ALTER TABLE run_histograms_v18 RENAME TO run_histograms;

CREATE INDEX run_histogram_headers ON run_histograms (run_key, quantity, thread, cpu, count,
    min_ns, max_ns, max_index, sum_ns, overflows, missed);
