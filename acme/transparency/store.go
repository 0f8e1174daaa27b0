// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"crypto/sha256"
)

// Store keeps the log: its entries, the hashes of its Merkle tree and its
// signed checkpoints. Every acme.Store implements it (acme.Store embeds
// it): storage/sqlite and storage/postgres do, and storage/storagetest
// checks the role on both.
//
// An entry is written with what it records: acme's FinalizeOrder writes
// Certificate.LogEntry and RevokeCertificate its logEntry in their own
// transactions, so that no certificate is stored, and no revocation
// recorded, without its entry; AppendLogEntry writes the others (an
// administrator's action, a reload). An entry waits, pending, until the
// Sequencer integrates it: IntegrateLog gives a batch of pending entries
// the next leaf indexes, in the order the batch lists them, with the
// tree's new stored hashes and the checkpoint of the new size, in one
// transaction that is a compare-and-set on the size. Two sequencers can
// then never integrate the same entry, nor two entries at one index.
// Witnesses' cosignatures are added to a stored checkpoint afterwards
// (CosignLogCheckpoint), which can also make it the served one: the log
// can serve a size behind its head until enough witnesses cosigned. The
// stores' errors wrap acme's sentinels (ErrNotFound, ErrConflict).
type Store interface {
	// AppendLogEntry records entry, pending, in a transaction of its own.
	AppendLogEntry(ctx context.Context, entry []byte) error
	// PendingLogEntries returns up to limit pending entries, oldest
	// written first.
	PendingLogEntries(ctx context.Context, limit int) ([]PendingEntry, error)
	// IntegrateLog integrates b, or fails (acme.ErrConflict) and changes
	// nothing if the log's size is no longer b.OldSize or an entry of b is
	// no longer pending.
	IntegrateLog(ctx context.Context, b Batch) error
	// LogHead returns the log's size and the checkpoint of that size (nil
	// for the empty log).
	LogHead(ctx context.Context) (size int64, checkpoint []byte, err error)
	// LogCheckpoint returns the checkpoint stored for size
	// (acme.ErrNotFound if none was).
	LogCheckpoint(ctx context.Context, size int64) ([]byte, error)
	// CosignLogCheckpoint replaces the stored checkpoint of size with
	// checkpoint: the same signed checkpoint with witnesses' cosignatures
	// added (the caller checks that; the store does not parse notes). With
	// serve set it also makes size the served size, if it is larger than
	// the one served: the served size only grows. acme.ErrNotFound when no
	// checkpoint of size is stored.
	CosignLogCheckpoint(ctx context.Context, size int64, checkpoint []byte, serve bool) error
	// LogServed returns the served size and its stored checkpoint (0, nil
	// while none was served).
	LogServed(ctx context.Context) (size int64, checkpoint []byte, err error)
	// LogHashes returns the stored hashes at the given indexes
	// (tlog.StoredHashIndex), in that order (acme.ErrNotFound if one is
	// not stored): tlog.HashReader's ReadHashes.
	LogHashes(ctx context.Context, indexes []int64) ([][sha256.Size]byte, error)
	// LogEntries returns the integrated entries at leaf indexes from,
	// from+1, …, up to n of them, fewer at the end of the log.
	LogEntries(ctx context.Context, from int64, n int) ([][]byte, error)
	// LogIndexOf returns the leaf index of the integrated issuance entry
	// of the certificate serial (acme.ErrNotFound if there is none yet).
	LogIndexOf(ctx context.Context, serial string) (int64, error)
}

// PendingEntry is an entry written but not yet integrated.
type PendingEntry struct {
	// ID is the entry's place in the order of writing.
	ID    int64
	Entry []byte
}

// Batch is one integration of pending entries into the log.
type Batch struct {
	// OldSize is the log's size before the batch.
	OldSize int64
	// IDs are the pending entries integrated, at leaf indexes OldSize,
	// OldSize+1, … in this order.
	IDs []int64
	// Hashes are the stored hashes the batch adds (Append).
	Hashes []StoredHash
	// Checkpoint is the signed checkpoint of size OldSize+len(IDs).
	Checkpoint []byte
}

// StoredHash is one stored hash of the log's tree.
type StoredHash struct {
	Index int64 // tlog.StoredHashIndex
	Hash  [sha256.Size]byte
}
