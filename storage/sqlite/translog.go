// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The verifiable log's store (transparency.Store, migrations 0020 and 0021).

// q is a statement of sqlrow in SQLite's form.
func q(pg string) string { return strings.ReplaceAll(pg, "$", "?") }

// insertLogEntry writes entry, pending, in w's transaction: an issuance's
// names the certificate serial ("" for none).
func insertLogEntry(w *writeTx, entry []byte, serial string) error {
	var s any
	if serial != "" {
		s = serial
	}
	_, err := w.exec(wInsertLogEntry, entry, s)
	return err
}

// AppendLogEntry implements transparency.Store.
func (s *Store) AppendLogEntry(ctx context.Context, entry []byte) error {
	return s.write(ctx, func(w *writeTx) error {
		if err := insertLogEntry(w, entry, ""); err != nil {
			return writeErr("append a log entry", err)
		}
		return nil
	})
}

// PendingLogEntries implements transparency.Store.
func (s *Store) PendingLogEntries(ctx context.Context, limit int) ([]transparency.PendingEntry, error) {
	rows, err := s.r.QueryContext(ctx, q(sqlrow.LogPendingSQL), limit)
	if err != nil {
		return nil, drv.Wrap("pending log entries", err)
	}
	defer rows.Close()
	var out []transparency.PendingEntry
	for rows.Next() {
		var p transparency.PendingEntry
		if err := rows.Scan(&p.ID, &p.Entry); err != nil {
			return nil, drv.Wrap("pending log entries", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, drv.Wrap("pending log entries", err)
	}
	return out, nil
}

// IntegrateLog implements transparency.Store, in one write transaction.
func (s *Store) IntegrateLog(ctx context.Context, b transparency.Batch) error {
	what := fmt.Sprintf("integrate %d log entries at size %d", len(b.IDs), b.OldSize)
	newSize := b.OldSize + int64(len(b.IDs))
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wLogMoveSize, newSize, b.OldSize)
		if err != nil {
			return drv.Wrap(what, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return drv.Errorf("%s: the log's size moved: %w", what, acme.ErrConflict)
		}
		for i, id := range b.IDs {
			res, err := w.exec(wLogIndexEntry, b.OldSize+int64(i), id)
			if err != nil {
				return writeErr(what, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return drv.Errorf("%s: entry %d is not pending: %w", what, id, acme.ErrConflict)
			}
		}
		for _, h := range b.Hashes {
			if _, err := w.exec(wLogInsertHash, h.Index, h.Hash[:]); err != nil {
				return writeErr(what, err)
			}
		}
		if _, err := w.exec(wLogInsertCheckpoint, newSize, b.Checkpoint); err != nil {
			return writeErr(what, err)
		}
		return nil
	})
}

// LogHead implements transparency.Store.
func (s *Store) LogHead(ctx context.Context) (int64, []byte, error) {
	var size int64
	var cp []byte
	if err := s.r.QueryRowContext(ctx, q(sqlrow.LogHeadSQL)).Scan(&size, &cp); err != nil {
		return 0, nil, drv.Wrap("the log's head", err)
	}
	return size, cp, nil
}

// LogCheckpoint implements transparency.Store.
func (s *Store) LogCheckpoint(ctx context.Context, size int64) ([]byte, error) {
	var cp []byte
	if err := s.r.QueryRowContext(ctx, q(sqlrow.LogCheckpointSQL), size).Scan(&cp); err != nil {
		return nil, drv.RowErr(fmt.Sprintf("the log's checkpoint of size %d", size), err)
	}
	return cp, nil
}

// CosignLogCheckpoint implements transparency.Store, in one write
// transaction.
func (s *Store) CosignLogCheckpoint(ctx context.Context, size int64, checkpoint []byte, serve bool) error {
	what := fmt.Sprintf("cosign the log's checkpoint of size %d", size)
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.tx.ExecContext(writeCtx, q(sqlrow.LogCosignCheckpointSQL), size, checkpoint)
		if err != nil {
			return writeErr(what, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return drv.NotFound(what)
		}
		if serve {
			if _, err := w.tx.ExecContext(writeCtx, q(sqlrow.LogServeSQL), size); err != nil {
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
	if err := s.r.QueryRowContext(ctx, q(sqlrow.LogServedSQL)).Scan(&size, &cp); err != nil {
		return 0, nil, drv.Wrap("the log's served checkpoint", err)
	}
	return size, cp, nil
}

// hashesPerQuery bounds the indexes of one LogHashes query (SQLite allows
// 32766 parameters; a proof or a batch of the sequencer needs a few
// hundred at most).
const hashesPerQuery = 500

// LogHashes implements transparency.Store, in one query per
// hashesPerQuery indexes.
func (s *Store) LogHashes(ctx context.Context, indexes []int64) ([][sha256.Size]byte, error) {
	found := make(map[int64][sha256.Size]byte, len(indexes))
	for chunk := range slices.Chunk(indexes, hashesPerQuery) {
		args := make([]any, len(chunk))
		for i, idx := range chunk {
			args[i] = idx
		}
		rows, err := s.r.QueryContext(ctx, "SELECT idx, hash FROM log_hashes WHERE idx IN (?"+strings.Repeat(", ?", len(chunk)-1)+")", args...)
		if err != nil {
			return nil, drv.Wrap(sqlrow.LogHashesWhat, err)
		}
		err = sqlrow.ScanLogHashes(drv, rows, found)
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return sqlrow.OrderLogHashes(drv, indexes, found)
}

// LogEntries implements transparency.Store.
func (s *Store) LogEntries(ctx context.Context, from int64, n int) ([][]byte, error) {
	rows, err := s.r.QueryContext(ctx, q(sqlrow.LogEntriesSQL), from, n)
	if err != nil {
		return nil, drv.Wrap("log entries", err)
	}
	defer rows.Close()
	return sqlrow.ScanLogEntries(drv, from, rows)
}

// LogIndexOf implements transparency.Store.
func (s *Store) LogIndexOf(ctx context.Context, serial string) (int64, error) {
	var idx int64
	if err := s.r.QueryRowContext(ctx, q(sqlrow.LogIndexOfSQL), serial).Scan(&idx); err != nil {
		return 0, drv.RowErr(fmt.Sprintf("the log entry of certificate %q", serial), err)
	}
	return idx, nil
}
