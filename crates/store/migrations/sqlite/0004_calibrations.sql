-- Session-to-session noise measured by `vernier calibrate` (schema version 4).

-- One row per configuration of a calibration: the noise of benchmark + options + metric in the
-- environment with `fingerprint`. Standard deviations are of natural logarithms of the metric.
-- Not linked to the sessions by foreign key: a calibration stays valid when its sessions are
-- deleted. `compare` uses the newest row of a fingerprint and configuration.
CREATE TABLE calibrations (
    id            TEXT    NOT NULL PRIMARY KEY,
    created_at_ns INTEGER NOT NULL,
    fingerprint   TEXT    NOT NULL,
    benchmark     TEXT    NOT NULL,
    options       TEXT    NOT NULL CHECK (json_valid(options)),
    metric        TEXT    NOT NULL,
    sessions      INTEGER NOT NULL CHECK (sessions >= 2),
    runs          INTEGER NOT NULL CHECK (runs >= sessions),
    session_sd    REAL    NOT NULL CHECK (session_sd >= 0),
    within_sd     REAL    NOT NULL CHECK (within_sd >= 0),
    between_sd    REAL    NOT NULL CHECK (between_sd >= 0),
    df            REAL    NOT NULL CHECK (df > 0),
    session_ids   TEXT    NOT NULL CHECK (json_valid(session_ids))
) STRICT;

CREATE INDEX calibrations_by_configuration
    ON calibrations (fingerprint, benchmark, options, metric, created_at_ns);
