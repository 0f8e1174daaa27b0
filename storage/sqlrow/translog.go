// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"crypto/sha256"

	"github.com/weir-pki/weir/acme"
)

// The verifiable log's statements (transparency.Store; migrations sqlite 0020
// and 0021, postgres 0016 and 0017), in PostgreSQL's $n form; SQLite reads $n as ?n.
const (
	// LogInsertEntrySQL writes a pending entry: $1 the entry, $2 the
	// serial of the certificate an issuance entry records, else NULL.
	LogInsertEntrySQL = `INSERT INTO log_entries (entry, serial) VALUES ($1, $2)`
	// LogPendingSQL reads up to $1 pending entries, oldest written first,
	// from the partial index log_entries_pending.
	LogPendingSQL = `SELECT id, entry FROM log_entries WHERE log_index IS NULL ORDER BY id LIMIT $1`
	// LogMoveSizeSQL is the integration's compare-and-set: $1 the new
	// size, $2 the old.
	LogMoveSizeSQL = `UPDATE log_state SET size = $1 WHERE id = 1 AND size = $2`
	// LogIndexEntrySQL integrates the pending entry $2 at leaf index $1.
	LogIndexEntrySQL = `UPDATE log_entries SET log_index = $1 WHERE id = $2 AND log_index IS NULL`
	// LogInsertHashSQL stores the hash $2 at stored-hash index $1.
	LogInsertHashSQL = `INSERT INTO log_hashes (idx, hash) VALUES ($1, $2)`
	// LogInsertCheckpointSQL stores the checkpoint $2 of size $1.
	LogInsertCheckpointSQL = `INSERT INTO log_checkpoints (size, checkpoint) VALUES ($1, $2)`
	// LogHeadSQL reads the size and the checkpoint of that size.
	LogHeadSQL = `SELECT s.size, c.checkpoint FROM log_state AS s
		LEFT JOIN log_checkpoints AS c ON c.size = s.size WHERE s.id = 1`
	// LogCheckpointSQL reads the checkpoint of size $1.
	LogCheckpointSQL = `SELECT checkpoint FROM log_checkpoints WHERE size = $1`
	// LogHashSQL reads the stored hash at index $1.
	LogHashSQL = `SELECT hash FROM log_hashes WHERE idx = $1`
	// LogEntriesSQL reads up to $2 integrated entries from leaf index $1.
	LogEntriesSQL = `SELECT log_index, entry FROM log_entries WHERE log_index >= $1 ORDER BY log_index LIMIT $2`
	// LogCosignCheckpointSQL replaces the checkpoint of size $1 with $2,
	// the same checkpoint with witnesses' cosignatures added; it changes
	// no row when none of size $1 is stored.
	LogCosignCheckpointSQL = `UPDATE log_checkpoints SET checkpoint = $2 WHERE size = $1`
	// LogServeSQL makes $1 the served size if it is larger than the one
	// served: the served size only grows.
	LogServeSQL = `UPDATE log_state SET served_size = $1 WHERE id = 1 AND served_size < $1`
	// LogServedSQL reads the served size and the checkpoint of that size
	// (0 and NULL while none was served).
	LogServedSQL = `SELECT s.served_size, c.checkpoint FROM log_state AS s
		LEFT JOIN log_checkpoints AS c ON c.size = s.served_size WHERE s.id = 1`
	// LogIndexOfSQL reads the leaf index of serial $1's issuance entry.
	LogIndexOfSQL = `SELECT log_index FROM log_entries WHERE serial = $1 AND log_index IS NOT NULL ORDER BY log_index LIMIT 1`
)

// ScanLogEntries reads the rows of LogEntriesSQL from leaf index from:
// the entries in order, refusing a gap (a leaf the log lacks).
func ScanLogEntries(d Driver, from int64, rows Rows) ([][]byte, error) {
	const what = "log entries"
	var out [][]byte
	for rows.Next() {
		var idx int64
		var e []byte
		if err := rows.Scan(&idx, &e); err != nil {
			return nil, d.Wrap(what, err)
		}
		if idx != from+int64(len(out)) {
			return nil, d.Errorf("%s: leaf %d is missing", what, from+int64(len(out)))
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, d.Wrap(what, err)
	}
	return out, nil
}

// LogHashesWhat names the stored hashes in errors.
const LogHashesWhat = "the log's stored hashes"

// ScanLogHashes adds the rows (idx, hash) of a stored-hash query to found.
func ScanLogHashes(d Driver, rows Rows, found map[int64][sha256.Size]byte) error {
	for rows.Next() {
		var idx int64
		var h []byte
		if err := rows.Scan(&idx, &h); err != nil {
			return d.Wrap(LogHashesWhat, err)
		}
		if len(h) != sha256.Size {
			return d.Errorf("%s: %d is %d bytes", LogHashesWhat, idx, len(h))
		}
		found[idx] = [sha256.Size]byte(h)
	}
	if err := rows.Err(); err != nil {
		return d.Wrap(LogHashesWhat, err)
	}
	return nil
}

// OrderLogHashes returns the hashes of indexes, in their order, from
// found; a missing one is acme.ErrNotFound.
func OrderLogHashes(d Driver, indexes []int64, found map[int64][sha256.Size]byte) ([][sha256.Size]byte, error) {
	out := make([][sha256.Size]byte, len(indexes))
	for i, idx := range indexes {
		h, ok := found[idx]
		if !ok {
			return nil, d.Errorf("%s: %d: %w", LogHashesWhat, idx, acme.ErrNotFound)
		}
		out[i] = h
	}
	return out, nil
}
