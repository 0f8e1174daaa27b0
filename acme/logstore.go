// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"crypto/sha256"
)

// LogStore keeps the verifiable log (acme/transparency): its entries, the
// hashes of its Merkle tree and its signed checkpoints.
//
// An entry is written with what it records: FinalizeOrder writes
// Certificate.LogEntry and RevokeCertificate its logEntry in their own
// transactions, so that no certificate is stored, and no revocation
// recorded, without its entry; AppendLogEntry writes the others (an
// administrator's action, a reload). An entry waits, pending, until the
// sequencer integrates it: IntegrateLog gives a batch of pending entries
// the next leaf indexes, in the order the batch lists them, with the
// tree's new stored hashes and the checkpoint of the new size, in one
// transaction that is a compare-and-set on the size. Two sequencers can
// then never integrate the same entry, nor two entries at one index.
type LogStore interface {
	// AppendLogEntry records entry, pending, in a transaction of its own.
	AppendLogEntry(ctx context.Context, entry []byte) error
	// PendingLogEntries returns up to limit pending entries, oldest
	// written first.
	PendingLogEntries(ctx context.Context, limit int) ([]PendingLogEntry, error)
	// IntegrateLog integrates b, or wraps ErrConflict and changes nothing
	// if the log's size is no longer b.OldSize or an entry of b is no
	// longer pending.
	IntegrateLog(ctx context.Context, b LogBatch) error
	// LogHead returns the log's size and the checkpoint of that size (nil
	// for the empty log).
	LogHead(ctx context.Context) (size int64, checkpoint []byte, err error)
	// LogCheckpoint returns the checkpoint stored for size; ErrNotFound
	// if none was.
	LogCheckpoint(ctx context.Context, size int64) ([]byte, error)
	// LogHashes returns the stored hashes at the given indexes
	// (tlog.StoredHashIndex), in that order; ErrNotFound if one is not
	// stored. It is tlog.HashReader's ReadHashes.
	LogHashes(ctx context.Context, indexes []int64) ([][sha256.Size]byte, error)
	// LogEntries returns the integrated entries at leaf indexes from, from+1,
	// …, up to n of them, fewer at the end of the log.
	LogEntries(ctx context.Context, from int64, n int) ([][]byte, error)
	// LogIndexOf returns the leaf index of the integrated issuance entry
	// of the certificate serial; ErrNotFound if there is none yet.
	LogIndexOf(ctx context.Context, serial string) (int64, error)
}

// PendingLogEntry is an entry written but not yet integrated.
type PendingLogEntry struct {
	// ID is the entry's place in the order of writing.
	ID    int64
	Entry []byte
}

// LogBatch is one integration of pending entries into the log.
type LogBatch struct {
	// OldSize is the log's size before the batch.
	OldSize int64
	// IDs are the pending entries integrated, at leaf indexes OldSize,
	// OldSize+1, … in this order.
	IDs []int64
	// Hashes are the stored hashes the batch adds (tlog.StoredHashes of
	// each entry, in order).
	Hashes []LogHash
	// Checkpoint is the signed checkpoint of size OldSize+len(IDs).
	Checkpoint []byte
}

// LogHash is one stored hash of the log's tree.
type LogHash struct {
	Index int64 // tlog.StoredHashIndex
	Hash  [sha256.Size]byte
}
