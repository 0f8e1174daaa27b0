// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// DefaultMaxBatch is the most entries one Integrate call takes when
// Sequencer.MaxBatch is 0: at a few hundred issuances a second the log
// keeps up in one call per second, and one batch's transaction stays
// small (each entry adds about two stored hashes).
const DefaultMaxBatch = 1024

// Sequencer integrates the log's pending entries into its tree and signs
// the checkpoint of each new size with the log's key. One runs at a time
// (the caller holds a lease); should two run, the store's compare-and-set
// on the size lets one batch in and refuses the other, which changes
// nothing.
type Sequencer struct {
	Store Store
	// Signer is the log's key (NewNoteSigner); its name is the origin.
	Signer note.Signer
	// MaxBatch bounds the entries one Integrate takes (DefaultMaxBatch
	// when 0).
	MaxBatch int
	// Verifier, when set, is the log key's verifier: Integrate refuses to
	// extend a tree whose latest checkpoint it does not verify (a
	// sequencer holding another key, or serving another origin, would
	// sign checkpoints no monitor accepts).
	Verifier note.Verifier
	// Integrated, when set, is called with the entries of each batch
	// once it is stored (for the integration lag's metric).
	Integrated func([]PendingEntry)
}

// Integrate integrates up to MaxBatch pending entries, oldest written
// first, and returns the log's size after it and how many it integrated
// (0 when none was pending; no checkpoint is signed then). The stored
// hashes, the new root and its signed checkpoint are computed from the
// tree as stored, read through the store (Append), and written with the
// entries in one transaction.
func (s *Sequencer) Integrate(ctx context.Context) (size int64, n int, err error) {
	size, head, err := s.Store.LogHead(ctx)
	if err != nil {
		return 0, 0, err
	}
	if s.Verifier != nil && head != nil {
		if _, err := OpenCheckpoint(head, s.Verifier); err != nil {
			return size, 0, fmt.Errorf("transparency: the log's checkpoint of size %d does not verify with the sequencer's key %s, which will not extend it: %w", size, s.Verifier.Name(), err)
		}
	}
	limit := s.MaxBatch
	if limit <= 0 {
		limit = DefaultMaxBatch
	}
	pending, err := s.Store.PendingLogEntries(ctx, limit)
	if err != nil || len(pending) == 0 {
		return size, 0, err
	}
	entries := make([][]byte, len(pending))
	b := Batch{OldSize: size, IDs: make([]int64, len(pending))}
	for i, p := range pending {
		entries[i], b.IDs[i] = p.Entry, p.ID
	}
	stored := StoreHashReader(ctx, s.Store)
	added, err := Append(size, entries, stored)
	if err != nil {
		return size, 0, fmt.Errorf("transparency: hashing entries %d…: %w", size, err)
	}
	first := tlog.StoredHashIndex(0, size)
	for i, h := range added {
		b.Hashes = append(b.Hashes, StoredHash{Index: first + int64(i), Hash: h})
	}
	newSize := size + int64(len(entries))
	root, err := tlog.TreeHash(newSize, withAdded(stored, first, &added))
	if err != nil {
		return size, 0, fmt.Errorf("transparency: the root of size %d: %w", newSize, err)
	}
	b.Checkpoint, err = SignCheckpoint(Checkpoint{Origin: s.Signer.Name(), Size: newSize, Hash: root}, s.Signer)
	if err != nil {
		return size, 0, fmt.Errorf("transparency: signing the checkpoint of size %d: %w", newSize, err)
	}
	if err := s.Store.IntegrateLog(ctx, b); err != nil {
		return size, 0, err
	}
	if s.Integrated != nil {
		s.Integrated(pending)
	}
	return newSize, len(entries), nil
}

// StoreHashReader is a tlog.HashReader over a Store's stored hashes: the
// one a proof is computed with (tlog.ProveRecord, tlog.ProveTree).
func StoreHashReader(ctx context.Context, st Store) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		hs, err := st.LogHashes(ctx, indexes)
		if err != nil {
			return nil, err
		}
		if len(hs) != len(indexes) {
			return nil, errors.New("transparency: the store returned the wrong number of hashes")
		}
		out := make([]tlog.Hash, len(hs))
		for i, h := range hs {
			out[i] = tlog.Hash(h)
		}
		return out, nil
	})
}
