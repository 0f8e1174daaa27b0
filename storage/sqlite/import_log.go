// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weir-pki/weir/storage/transfer"
)

// The verifiable log's part of Import (migration 0020).

// LogEntries implements transfer.Sink.
func (im *Import) LogEntries(ctx context.Context, rows []transfer.LogEntry) error {
	return im.insertRows(ctx, transfer.LogEntries, exportLogEntryCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		r := rows[i]
		return []any{r.ID, r.Entry, r.Serial, r.LogIndex}, nil
	})
}

// LogHashes implements transfer.Sink.
func (im *Import) LogHashes(ctx context.Context, rows []transfer.LogHash) error {
	return im.insertRows(ctx, transfer.LogHashes, exportLogHashCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		return []any{rows[i].Index, rows[i].Hash}, nil
	})
}

// LogCheckpoints implements transfer.Sink.
func (im *Import) LogCheckpoints(ctx context.Context, rows []transfer.LogCheckpoint) error {
	return im.insertRows(ctx, transfer.LogCheckpoints, exportLogCheckpointCols, len(rows), func(_ *sql.Tx, i int) ([]any, error) {
		return []any{rows[i].Size, rows[i].Checkpoint}, nil
	})
}

// finishLog sets the log's size and served size to want's, the source's.
func (im *Import) finishLog(ctx context.Context, want transfer.Summary) error {
	if err := want.CheckLog(); err != nil {
		return fmt.Errorf("sqlite: import: %w", err)
	}
	if _, err := im.db.ExecContext(ctx, `UPDATE log_state SET size = ?, served_size = ? WHERE id = 1`, want.LogSize, want.LogServedSize); err != nil {
		return fmt.Errorf("sqlite: import: the log's size: %w", err)
	}
	return nil
}
