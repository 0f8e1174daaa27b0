// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The verifiable log's store (transparency.Store, migrations 0016 and 0017).

// AppendLogEntry implements transparency.Store.
func (s *Store) AppendLogEntry(ctx context.Context, entry []byte) error {
	if _, err := s.pool.Exec(ctx, sqlrow.LogInsertEntrySQL, entry, nil); err != nil {
		return writeErr("append a log entry", err)
	}
	return nil
}

// PendingLogEntries implements transparency.Store.
func (s *Store) PendingLogEntries(ctx context.Context, limit int) ([]transparency.PendingEntry, error) {
	return collect(ctx, s.pool, "pending log entries", sqlrow.LogPendingSQL, []any{limit},
		func(r sqlrow.Scanner) (transparency.PendingEntry, error) {
			var p transparency.PendingEntry
			return p, r.Scan(&p.ID, &p.Entry)
		})
}

// IntegrateLog implements transparency.Store: its statements go in one batch,
// one round trip, inside one transaction.
func (s *Store) IntegrateLog(ctx context.Context, b transparency.Batch) error {
	what := fmt.Sprintf("integrate %d log entries at size %d", len(b.IDs), b.OldSize)
	newSize := b.OldSize + int64(len(b.IDs))
	return s.inTx(ctx, what, func(tx pgx.Tx) error {
		var batch pgx.Batch
		batch.Queue(sqlrow.LogMoveSizeSQL, newSize, b.OldSize)
		for i, id := range b.IDs {
			batch.Queue(sqlrow.LogIndexEntrySQL, b.OldSize+int64(i), id)
		}
		for _, h := range b.Hashes {
			batch.Queue(sqlrow.LogInsertHashSQL, h.Index, h.Hash[:])
		}
		batch.Queue(sqlrow.LogInsertCheckpointSQL, newSize, b.Checkpoint)
		res := tx.SendBatch(ctx, &batch)
		defer res.Close()
		for i := range batch.Len() {
			tag, err := res.Exec()
			if err != nil {
				return writeErr(what, err)
			}
			if i <= len(b.IDs) && tag.RowsAffected() != 1 {
				if i == 0 {
					return drv.Errorf("%s: the log's size moved: %w", what, acme.ErrConflict)
				}
				return drv.Errorf("%s: entry %d is not pending: %w", what, b.IDs[i-1], acme.ErrConflict)
			}
		}
		return res.Close()
	})
}

// LogHead implements transparency.Store.
func (s *Store) LogHead(ctx context.Context) (int64, []byte, error) {
	var size int64
	var cp []byte
	if err := s.pool.QueryRow(ctx, sqlrow.LogHeadSQL).Scan(&size, &cp); err != nil {
		return 0, nil, drv.Wrap("the log's head", err)
	}
	return size, cp, nil
}

// LogCheckpoint implements transparency.Store.
func (s *Store) LogCheckpoint(ctx context.Context, size int64) ([]byte, error) {
	var cp []byte
	if err := s.pool.QueryRow(ctx, sqlrow.LogCheckpointSQL, size).Scan(&cp); err != nil {
		return nil, drv.RowErr(fmt.Sprintf("the log's checkpoint of size %d", size), err)
	}
	return cp, nil
}

// CosignLogCheckpoint implements transparency.Store, in one transaction.
func (s *Store) CosignLogCheckpoint(ctx context.Context, size int64, checkpoint []byte, serve bool) error {
	what := fmt.Sprintf("cosign the log's checkpoint of size %d", size)
	return s.inTx(ctx, what, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sqlrow.LogCosignCheckpointSQL, size, checkpoint)
		if err != nil {
			return writeErr(what, err)
		}
		if tag.RowsAffected() != 1 {
			return drv.NotFound(what)
		}
		if serve {
			if _, err := tx.Exec(ctx, sqlrow.LogServeSQL, size); err != nil {
				return writeErr(what, err)
			}
		}
		return nil
	})
}

// LogServed implements transparency.Store.
func (s *Store) LogServed(ctx context.Context) (int64, []byte, error) {
	var size int64
	var cp []byte
	if err := s.pool.QueryRow(ctx, sqlrow.LogServedSQL).Scan(&size, &cp); err != nil {
		return 0, nil, drv.Wrap("the log's served checkpoint", err)
	}
	return size, cp, nil
}

// LogHashes implements transparency.Store, in one query.
func (s *Store) LogHashes(ctx context.Context, indexes []int64) ([][sha256.Size]byte, error) {
	rows, err := s.pool.Query(ctx, `SELECT idx, hash FROM log_hashes WHERE idx = ANY($1)`, indexes)
	if err != nil {
		return nil, drv.Wrap(sqlrow.LogHashesWhat, err)
	}
	defer rows.Close()
	found := make(map[int64][sha256.Size]byte, len(indexes))
	if err := sqlrow.ScanLogHashes(drv, rows, found); err != nil {
		return nil, err
	}
	return sqlrow.OrderLogHashes(drv, indexes, found)
}

// LogEntries implements transparency.Store.
func (s *Store) LogEntries(ctx context.Context, from int64, n int) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, sqlrow.LogEntriesSQL, from, n)
	if err != nil {
		return nil, drv.Wrap("log entries", err)
	}
	defer rows.Close()
	return sqlrow.ScanLogEntries(drv, from, rows)
}

// LogIndexOf implements transparency.Store.
func (s *Store) LogIndexOf(ctx context.Context, serial string) (int64, error) {
	var idx int64
	if err := s.pool.QueryRow(ctx, sqlrow.LogIndexOfSQL, serial).Scan(&idx); err != nil {
		return 0, drv.RowErr(fmt.Sprintf("the log entry of certificate %q", serial), err)
	}
	return idx, nil
}
