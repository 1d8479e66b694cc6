-- The process that records a session (schema version 3).
--
-- A session is `running` while its process records it. When that process is gone (killed,
-- crashed, the machine went down) nothing will finish the session, and vernier shows it as
-- `abandoned`. The process is named by its pid, the boot it ran in
-- (/proc/sys/kernel/random/boot_id) and its start time (field 22 of /proc/PID/stat, clock ticks
-- after boot), so neither a reboot nor a reused pid passes for the owner. Null for sessions
-- recorded before version 3 and for imported ones: no process here records those.
ALTER TABLE sessions ADD COLUMN owner_pid INTEGER CHECK (owner_pid > 0);
ALTER TABLE sessions ADD COLUMN owner_boot_id TEXT;
ALTER TABLE sessions ADD COLUMN owner_start_ticks INTEGER CHECK (owner_start_ticks >= 0);
