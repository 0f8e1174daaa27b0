// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weir-pki/weir/storage/sqlrow"
	"github.com/weir-pki/weir/storage/transfer"
)

// The verifiable log's part of Export (migrations 0020 and 0021).

const (
	exportLogEntryCols      = "id, entry, serial, log_index"
	exportLogHashCols       = "idx, hash"
	exportLogCheckpointCols = "size, checkpoint"
)

// exportLog sends the log's tables to sink and returns their row counts,
// the log's size and its served size.
func exportLog(ctx context.Context, tx *sql.Tx, sink transfer.Sink, batch int) (transfer.Counts, int64, int64, error) {
	counts := transfer.Counts{}
	var err error
	if counts[transfer.LogEntries], err = exportTable(ctx, tx, transfer.LogEntries, "id", batch, scanLogEntryRow, sink.LogEntries); err != nil {
		return nil, 0, 0, err
	}
	if counts[transfer.LogHashes], err = exportTable(ctx, tx, transfer.LogHashes, "idx", batch, scanLogHashRow, sink.LogHashes); err != nil {
		return nil, 0, 0, err
	}
	if counts[transfer.LogCheckpoints], err = exportTable(ctx, tx, transfer.LogCheckpoints, "size", batch, scanLogCheckpointRow, sink.LogCheckpoints); err != nil {
		return nil, 0, 0, err
	}
	var size, served int64
	if err := tx.QueryRowContext(ctx, `SELECT size, served_size FROM log_state WHERE id = 1`).Scan(&size, &served); err != nil {
		return nil, 0, 0, fmt.Errorf("sqlite: export: the log's size: %w", err)
	}
	return counts, size, served, nil
}

func scanLogEntryRow(row sqlrow.Scanner) (transfer.LogEntry, error) {
	var r transfer.LogEntry
	var serial sql.NullString
	var idx sql.NullInt64
	if err := row.Scan(&r.ID, &r.Entry, &serial, &idx); err != nil {
		return r, err
	}
	r.Serial = nullStr(serial)
	if idx.Valid {
		r.LogIndex = &idx.Int64
	}
	return r, nil
}

func scanLogHashRow(row sqlrow.Scanner) (transfer.LogHash, error) {
	var r transfer.LogHash
	return r, row.Scan(&r.Index, &r.Hash)
}

func scanLogCheckpointRow(row sqlrow.Scanner) (transfer.LogCheckpoint, error) {
	var r transfer.LogCheckpoint
	return r, row.Scan(&r.Size, &r.Checkpoint)
}
