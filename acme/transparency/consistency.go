// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// ConsistencyProof proves, offline, that the log's latest tree extends
// the tree of a checkpoint a relying party already holds: the RFC 9162
// consistency proof from OldSize (tlog.ProveTree) and the signed
// checkpoint of the latest tree. Its JSON form:
//
//	{
//	  "oldSize": 300,                 // the size of the checkpoint held
//	  "proof": ["q1w…=", "Zx8…="],    // the proof's hashes, each base64
//	  "checkpoint": "Y2Eud2Vpci…"     // the latest signed checkpoint, base64
//	}
type ConsistencyProof struct {
	OldSize    int64       `json:"oldSize"`
	Proof      []tlog.Hash `json:"proof"`
	Checkpoint []byte      `json:"checkpoint"`
}

// ProveConsistency is the proof that the log's latest tree extends its
// tree of oldSize, from the stored hashes.
func ProveConsistency(ctx context.Context, st Store, oldSize int64) (ConsistencyProof, error) {
	size, cp, err := st.LogHead(ctx)
	if err != nil {
		return ConsistencyProof{}, fmt.Errorf("transparency: the log's head: %w", err)
	}
	if oldSize < 0 || oldSize > size || cp == nil {
		return ConsistencyProof{}, fmt.Errorf("transparency: size %d is not a size the log had (it has %d entries)", oldSize, size)
	}
	p, err := tlog.ProveTree(size, oldSize, StoreHashReader(ctx, st))
	if err != nil {
		return ConsistencyProof{}, fmt.Errorf("transparency: proving size %d extends size %d: %w", size, oldSize, err)
	}
	return ConsistencyProof{OldSize: oldSize, Proof: p, Checkpoint: cp}, nil
}

// Verify checks p against held, a signed checkpoint of the log the
// caller kept, with the log's verifier key: both checkpoints are signed
// by it, p is from held's size, and the latest tree extends held's. It
// returns the latest checkpoint, which the caller may keep from then on.
func (p ConsistencyProof) Verify(logKey note.Verifier, held []byte) (Checkpoint, error) {
	old, err := OpenCheckpoint(held, logKey)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("the checkpoint held: %w", err)
	}
	c, err := OpenCheckpoint(p.Checkpoint, logKey)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("the proof's %w", err)
	}
	switch {
	case p.OldSize != old.Size:
		return Checkpoint{}, fmt.Errorf("proof: from size %d, the checkpoint held is of size %d", p.OldSize, old.Size)
	case c.Size < old.Size:
		return Checkpoint{}, fmt.Errorf("proof: the log's size %d is smaller than the checkpoint held's %d: rewound", c.Size, old.Size)
	}
	if err := tlog.CheckTree(p.Proof, c.Size, c.Hash, old.Size, old.Hash); err != nil {
		return Checkpoint{}, fmt.Errorf("proof: the tree of size %d does not extend the checkpoint held of size %d: %w", c.Size, old.Size, err)
	}
	return c, nil
}
