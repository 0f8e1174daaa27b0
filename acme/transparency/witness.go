// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"sync"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Witness cosigns the checkpoints of the logs it knows, as a C2SP
// tlog-witness does: for each log (by origin) it keeps the size and root
// hash of the latest checkpoint it cosigned, and cosigns a new one only
// when it is signed by the log's key and a consistency proof shows that
// it extends that one. It therefore never cosigns two checkpoints of one
// log that disagree: a checkpoint of the size it holds with another root,
// or a bigger tree that does not contain the one it holds, is refused (a
// fork). A log that showed one history to some and another to others is
// caught by anyone who asks for this witness's cosignature.
//
// The cosignatures are C2SP tlog-cosignature (cosignature/v1): the
// witness's Ed25519 signature over the checkpoint and the time it signed
// it. Serve it over HTTP with Handler; Cosign is the same check without
// HTTP, for a process that verified the proof's inputs itself.
type Witness struct {
	signer *torchwood.CosignatureSigner
	logs   map[string]note.Verifier
	state  *witnessState
	// mu serialises Cosign: the check of the old size against the state
	// and the state's update happen as one step (c2sp.org/tlog-witness:
	// otherwise a smaller tree could overwrite a bigger one).
	mu sync.Mutex
}

// WitnessConfig is what a Witness is made of.
type WitnessConfig struct {
	// Name is the witness's key name (c2sp.org/signed-note), such as
	// "witness.example.internal/w1": no spaces, no "+".
	Name string
	// Key is the witness's Ed25519 key (a key file's, or a token's).
	Key crypto.Signer
	// Logs are the verifier keys of the logs it witnesses; each key's
	// name is its log's origin, as weir's log keys are (NewNoteSigner).
	Logs []note.Verifier
	// StatePath is the file that keeps, per origin, the latest
	// checkpoint cosigned. It must exist (InitWitnessState makes an empty
	// one on the first start): a witness that lost it would cosign
	// anything again, including a fork of what it cosigned before.
	StatePath string
}

// AddLogKey adds the log whose verifier key (c2sp.org/signed-note,
// Ed25519, named by the log's origin) is vkey to c.Logs.
func (c *WitnessConfig) AddLogKey(vkey string) error {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("%q is not a log's verifier key (name+hash+base64, Ed25519): %v", vkey, err)
	}
	c.Logs = append(c.Logs, v)
	return nil
}

// NewWitness makes the witness c describes and reads its state file.
func NewWitness(c WitnessConfig) (*Witness, error) {
	signer, err := torchwood.NewCosignatureSigner(c.Name, c.Key)
	if err != nil {
		return nil, fmt.Errorf("witness key %q: %w", c.Name, err)
	}
	if len(c.Logs) == 0 {
		return nil, errors.New("witness: no log to witness")
	}
	logs := make(map[string]note.Verifier, len(c.Logs))
	for _, v := range c.Logs {
		if _, dup := logs[v.Name()]; dup {
			return nil, fmt.Errorf("witness: two keys for the log %q; a witness trusts one key per origin", v.Name())
		}
		logs[v.Name()] = v
	}
	st, err := loadWitnessState(c.StatePath)
	if err != nil {
		return nil, err
	}
	return &Witness{signer: signer, logs: logs, state: st}, nil
}

// VerifierKey is the witness's verifier key (c2sp.org/signed-note, key
// type cosignature/v1): what a log or a monitor is given to check its
// cosignatures (ParseWitnessKey).
func (w *Witness) VerifierKey() string { return w.signer.Verifier().String() }

// WitnessVerifierKey is the verifier key of the witness named name with
// key (as VerifierKey says it), for a new key before its witness runs.
func WitnessVerifierKey(name string, key crypto.Signer) (string, error) {
	s, err := torchwood.NewCosignatureSigner(name, key)
	if err != nil {
		return "", fmt.Errorf("witness key %q: %w", name, err)
	}
	return s.Verifier().String(), nil
}

// Verifier checks the witness's cosignatures.
func (w *Witness) Verifier() note.Verifier { return w.signer.Verifier() }

// Cosign checks signedCheckpoint against the latest checkpoint the
// witness cosigned for its origin, with proof its consistency proof
// from oldSize, and returns the witness's cosignature: note signature
// lines, each ending with a newline. The new checkpoint is on disk
// before it returns. A refusal is a *WitnessRefusal saying why (its
// Reason is one of the ErrWitness errors); another error is the
// witness's own failure (its state could not be written).
func (w *Witness) Cosign(oldSize int64, proof []tlog.Hash, signedCheckpoint []byte) ([]byte, error) {
	origin, _, ok := bytes.Cut(signedCheckpoint, []byte("\n"))
	if !ok {
		return nil, refuse(ErrWitnessMalformed, "the checkpoint has no origin line")
	}
	logKey, ok := w.logs[string(origin)]
	if !ok {
		return nil, refuse(ErrWitnessUnknownLog, fmt.Sprintf("the origin %q is not a log this witness knows", origin))
	}
	n, err := note.Open(signedCheckpoint, note.VerifierList(logKey))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return nil, refuse(ErrWitnessBadSignature, fmt.Sprintf("the checkpoint carries no signature of the log key %s", keyID(logKey)))
	case errors.As(err, &invalid):
		return nil, refuse(ErrWitnessBadSignature, fmt.Sprintf("the signature of the log key %s does not verify", keyID(logKey)))
	case err != nil:
		return nil, refuse(ErrWitnessMalformed, "the checkpoint is not a signed note: "+err.Error())
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return nil, refuse(ErrWitnessMalformed, err.Error())
	}
	switch {
	case oldSize < 0:
		return nil, refuse(ErrWitnessMalformed, fmt.Sprintf("old size %d is negative", oldSize))
	case oldSize > c.Size:
		return nil, refuse(ErrWitnessMalformed, fmt.Sprintf("old size %d is bigger than the checkpoint's size %d", oldSize, c.Size))
	case oldSize == 0 && len(proof) > 0:
		return nil, refuse(ErrWitnessMalformed, fmt.Sprintf("old size 0 takes no consistency proof, got %d hashes", len(proof)))
	}
	if err := w.advance(c, oldSize, proof); err != nil {
		return nil, err
	}
	signed, err := note.Sign(&note.Note{Text: n.Text}, w.signer)
	if err != nil {
		return nil, fmt.Errorf("witness: cosigning %s at size %d: %w", c.Origin, c.Size, err)
	}
	// The cosignature is the signed note's last line: note.Sign signed
	// the text with the witness's key alone.
	sigs := signed[bytes.LastIndex(signed, []byte("\n\n"))+2:]
	return sigs, nil
}

// advance checks c against the tree held for its origin and, when it is
// consistent with it, records c as the latest cosigned (on disk first).
func (w *Witness) advance(c Checkpoint, oldSize int64, proof []tlog.Hash) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	held := w.state.Logs[c.Origin]
	if oldSize != held.Size {
		return &WitnessRefusal{Reason: ErrWitnessOldSize, Size: held.Size,
			Detail: fmt.Sprintf("old size %d is not %d, the size of the latest checkpoint of %s this witness cosigned", oldSize, held.Size, c.Origin)}
	}
	switch {
	case c.Size == held.Size && held.Cosigned && c.Hash != held.Hash:
		return refuse(ErrWitnessFork, fmt.Sprintf("this witness cosigned %s at size %d with root %s, not %s", c.Origin, c.Size, held.Hash, c.Hash))
	case c.Size == held.Size && len(proof) > 0:
		return refuse(ErrWitnessBadProof, fmt.Sprintf("a tree of size %d is consistent with itself by an empty proof, got %d hashes", c.Size, len(proof)))
	case c.Size == held.Size && held.Cosigned:
		return nil // the checkpoint cosigned before; cosign it again
	case oldSize > 0:
		if err := tlog.CheckTree(proof, c.Size, c.Hash, oldSize, held.Hash); err != nil {
			return refuse(ErrWitnessBadProof, fmt.Sprintf("the proof does not show that %s at size %d (root %s) contains the size %d cosigned (root %s)",
				c.Origin, c.Size, c.Hash, oldSize, held.Hash))
		}
	}
	return w.state.record(c.Origin, witnessedTree{Size: c.Size, Hash: c.Hash, Cosigned: true})
}

// keyID names a note key in messages: its name and key hash.
func keyID(v note.Verifier) string { return fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash()) }
