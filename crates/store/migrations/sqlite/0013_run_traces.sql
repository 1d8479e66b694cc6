-- Traced worst-case latencies (schema version 13): for a run of `latency:trace=US` whose
-- measurement thread had a sample above US, the kernel's events on that thread's CPU from
-- shortly before the sample's expiry to its marker (vernier_model::trace::ThreadTrace), as
-- JSON compressed with DEFLATE (RFC 1951): a few KiB where ftrace's text is tens. Beside the
-- thread's histogram, deleted with its run. A table of its own: a vernier of version 12 reads
-- every session as before, without the traces.

CREATE TABLE run_traces (
    run_key    INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
    quantity   TEXT    NOT NULL,
    thread     INTEGER NOT NULL CHECK (thread >= 0),
    -- The traced sample and the count of events kept, for queries without decoding.
    latency_ns INTEGER NOT NULL CHECK (latency_ns >= 0),
    events     INTEGER NOT NULL CHECK (events >= 0),
    trace      BLOB    NOT NULL,
    PRIMARY KEY (run_key, quantity, thread)
) STRICT, WITHOUT ROWID;
