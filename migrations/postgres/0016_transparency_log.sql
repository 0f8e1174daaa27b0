-- The verifiable log, as in sqlite 0020 (see there). The sequencer runs
-- under a lease, so one replica integrates; the compare-and-set on
-- log_state.size refuses a second one all the same. Entries committed out
-- of id order are integrated by the next run: the sequencer reads the
-- pending ones, not the ids after the last it saw.
CREATE TABLE log_entries (
	id        BIGSERIAL PRIMARY KEY,
	entry     BYTEA NOT NULL,
	serial    TEXT,
	log_index BIGINT UNIQUE
);
CREATE INDEX log_entries_pending ON log_entries (id) WHERE log_index IS NULL;
CREATE INDEX log_entries_serial ON log_entries (serial) WHERE serial IS NOT NULL;
CREATE TABLE log_hashes (
	idx  BIGINT PRIMARY KEY,
	hash BYTEA NOT NULL
);
CREATE TABLE log_checkpoints (
	size       BIGINT PRIMARY KEY,
	checkpoint BYTEA NOT NULL
);
CREATE TABLE log_state (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	size BIGINT NOT NULL
);
INSERT INTO log_state (id, size) VALUES (1, 0);
