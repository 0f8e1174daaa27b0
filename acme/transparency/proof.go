// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// InclusionProof proves, offline, that an entry is in the log: the entry,
// its leaf index, the RFC 9162 inclusion proof (tlog.ProveRecord) and the
// signed checkpoint whose tree it is proved against. Whoever holds the
// log's verifier key checks it with Verify, without asking the log.
//
// Its JSON form, what the admin API's GET /api/v1/log/proof/{serial}
// answers and "weir log prove" writes:
//
//	{
//	  "index": 17,                    // the entry's leaf index
//	  "entry": "eyJ2IjoxLC…",         // the entry's bytes (the leaf), base64
//	  "proof": ["q1w…=", "Zx8…="],    // the proof's hashes, each base64, leaf to root
//	  "checkpoint": "Y2Eud2Vpci…"     // the signed checkpoint note, base64
//	}
type InclusionProof struct {
	Index      int64       `json:"index"`
	Entry      []byte      `json:"entry"`
	Proof      []tlog.Hash `json:"proof"`
	Checkpoint []byte      `json:"checkpoint"`
}

// ProveSerial is the inclusion proof of the issuance entry of the
// certificate serial (as the store records it: lowercase hex) in the tree
// of the log's latest checkpoint. A serial whose entry is not integrated
// yet (or was never written) fails with the store's not-found error
// wrapped (acme.ErrNotFound: the caller compares with errors.Is).
func ProveSerial(ctx context.Context, st Store, serial string) (InclusionProof, error) {
	idx, err := st.LogIndexOf(ctx, serial)
	if err != nil {
		return InclusionProof{}, fmt.Errorf("transparency: the issuance entry of %q: %w", serial, err)
	}
	// The head is read after the index, so its tree holds the entry.
	size, cp, err := st.LogHead(ctx)
	if err != nil {
		return InclusionProof{}, fmt.Errorf("transparency: the log's head: %w", err)
	}
	if idx < 0 || idx >= size || cp == nil {
		return InclusionProof{}, fmt.Errorf("transparency: the entry of %q is at index %d, beyond the log's size %d", serial, idx, size)
	}
	es, err := st.LogEntries(ctx, idx, 1)
	if err != nil {
		return InclusionProof{}, fmt.Errorf("transparency: entry %d: %w", idx, err)
	}
	if len(es) != 1 {
		return InclusionProof{}, fmt.Errorf("transparency: entry %d is not stored", idx)
	}
	proof, err := tlog.ProveRecord(size, idx, StoreHashReader(ctx, st))
	if err != nil {
		return InclusionProof{}, fmt.Errorf("transparency: proving entry %d in the tree of size %d: %w", idx, size, err)
	}
	return InclusionProof{Index: idx, Entry: es[0], Proof: proof, Checkpoint: cp}, nil
}

// Verify checks p with the log's verifier key: the checkpoint is signed by
// it, the entry is the leaf at p.Index of the checkpoint's tree, and the
// entry parses. It returns the checkpoint and the entry.
func (p InclusionProof) Verify(logKey note.Verifier) (Checkpoint, Entry, error) {
	c, err := OpenCheckpoint(p.Checkpoint, logKey)
	if err != nil {
		return Checkpoint{}, Entry{}, err
	}
	if p.Index < 0 || p.Index >= c.Size {
		return Checkpoint{}, Entry{}, fmt.Errorf("proof: index %d is outside the checkpoint's tree of size %d", p.Index, c.Size)
	}
	if err := tlog.CheckRecord(p.Proof, c.Size, c.Hash, p.Index, tlog.RecordHash(p.Entry)); err != nil {
		return Checkpoint{}, Entry{}, fmt.Errorf("proof: the entry is not leaf %d of the checkpoint's tree of size %d: %w", p.Index, c.Size, err)
	}
	e, err := ParseEntry(p.Entry)
	if err != nil {
		return Checkpoint{}, Entry{}, fmt.Errorf("proof: entry %d: %w", p.Index, err)
	}
	return c, e, nil
}

// VerifyCertificate checks p (Verify) and that its entry is the issuance
// of exactly the certificate certDER.
func (p InclusionProof) VerifyCertificate(logKey note.Verifier, certDER []byte) error {
	_, e, err := p.Verify(logKey)
	if err != nil {
		return err
	}
	if e.Kind != KindIssued {
		return fmt.Errorf("proof: entry %d is of kind %q, not an issuance", p.Index, e.Kind)
	}
	if !bytes.Equal(e.Issued.Certificate, certDER) {
		return fmt.Errorf("proof: entry %d records the issuance of another certificate (serial %s), not this one (serial %s)",
			p.Index, serialOf(e.Issued.Certificate), serialOf(certDER))
	}
	return nil
}

// serialOf is a certificate's serial, lowercase hex, or what is wrong
// with it.
func serialOf(der []byte) string {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%x", c.SerialNumber)
}
