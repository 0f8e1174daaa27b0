-- The verifiable log (acme/transparency, acme.LogStore). An entry is
-- written in the transaction of what it records (an issuance, a
-- revocation) or in one of its own (an administrator's action, a reload),
-- with log_index NULL. One sequencer at a time integrates the pending
-- entries in id order: it gives them the next log indexes, adds the tree's
-- stored hashes (golang.org/x/mod/sumdb/tlog's numbering) and the signed
-- checkpoint of the new size, and moves log_state.size, in one
-- transaction whose compare-and-set on the size keeps a second sequencer
-- from integrating the same entries.
CREATE TABLE log_entries (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	entry     BLOB NOT NULL,
	serial    TEXT,              -- the certificate an issuance entry records
	log_index INTEGER UNIQUE     -- its leaf index, once integrated
);
CREATE INDEX log_entries_pending ON log_entries (id) WHERE log_index IS NULL;
CREATE INDEX log_entries_serial ON log_entries (serial) WHERE serial IS NOT NULL;
CREATE TABLE log_hashes (
	idx  INTEGER PRIMARY KEY,  -- tlog.StoredHashIndex
	hash BLOB NOT NULL
);
CREATE TABLE log_checkpoints (
	size       INTEGER PRIMARY KEY,
	checkpoint BLOB NOT NULL
);
CREATE TABLE log_state (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	size INTEGER NOT NULL
);
INSERT INTO log_state (id, size) VALUES (1, 0);
