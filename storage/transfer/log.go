// SPDX-License-Identifier: Apache-2.0

package transfer

// The verifiable log's rows (transparency.Store). A move keeps the log as it
// is, entry for entry and hash for hash: its checkpoints, which monitors
// and witnesses hold, must stay provable on the new store.

// LogEntry is a row of log_entries.
type LogEntry struct {
	ID       int64 // its place in the order of writing
	Entry    []byte
	Serial   *string // the certificate of an issuance entry; nil is NULL
	LogIndex *int64  // its leaf index; nil while pending
}

// LogHash is a row of log_hashes: a stored hash of the tree.
type LogHash struct {
	Index int64 // tlog.StoredHashIndex
	Hash  []byte
}

// LogCheckpoint is a row of log_checkpoints.
type LogCheckpoint struct {
	Size       int64
	Checkpoint []byte
}
