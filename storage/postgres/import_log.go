// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/storage/transfer"
)

// The verifiable log's part of Import (migration 0016).

// LogEntries implements transfer.Sink.
func (im *Import) LogEntries(ctx context.Context, rows []transfer.LogEntry) error {
	return im.copyRows(ctx, transfer.LogEntries, []string{"id", "entry", "serial", "log_index"}, len(rows), func(i int) []any {
		r := rows[i]
		return []any{r.ID, r.Entry, r.Serial, r.LogIndex}
	})
}

// LogHashes implements transfer.Sink.
func (im *Import) LogHashes(ctx context.Context, rows []transfer.LogHash) error {
	return im.copyRows(ctx, transfer.LogHashes, []string{"idx", "hash"}, len(rows), func(i int) []any {
		return []any{rows[i].Index, rows[i].Hash}
	})
}

// LogCheckpoints implements transfer.Sink.
func (im *Import) LogCheckpoints(ctx context.Context, rows []transfer.LogCheckpoint) error {
	return im.copyRows(ctx, transfer.LogCheckpoints, []string{"size", "checkpoint"}, len(rows), func(i int) []any {
		return []any{rows[i].Size, rows[i].Checkpoint}
	})
}

// finishLog sets the log's size and served size to want's, the source's.
func (im *Import) finishLog(ctx context.Context, want transfer.Summary) error {
	if err := want.CheckLog(); err != nil {
		return fmt.Errorf("postgres: import: %w", err)
	}
	if _, err := im.conn.Exec(ctx, `UPDATE log_state SET size = $1, served_size = $2 WHERE id = 1`, want.LogSize, want.LogServedSize); err != nil {
		return fmt.Errorf("postgres: import: the log's size: %w", err)
	}
	return nil
}
