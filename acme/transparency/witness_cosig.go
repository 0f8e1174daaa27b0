// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

// cosignatureKeyType is the key type byte of a cosignature/v1 verifier
// key (c2sp.org/tlog-cosignature): an Ed25519 public key follows it.
const cosignatureKeyType = 0x04

// ErrBadCosignature marks a cosignature of a known witness that does
// not verify (CountCosignatures): evidence against whoever served it, as
// a bad log signature is.
var ErrBadCosignature = errors.New("a witness's cosignature does not verify")

// ParseWitnessKey reads a witness's verifier key ("name+hash+base64", of
// type cosignature/v1, as Witness.VerifierKey prints it) and returns the
// verifier of its cosignatures.
func ParseWitnessKey(vkey string) (note.Verifier, error) {
	name, rest, _ := strings.Cut(vkey, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	hash, err := strconv.ParseUint(hash16, 16, 32)
	key, err2 := base64.StdEncoding.Strict().DecodeString(key64)
	if name == "" || len(hash16) != 8 || err != nil || err2 != nil {
		return nil, fmt.Errorf("witness key %q is not name+hash+base64 (c2sp.org/signed-note)", vkey)
	}
	if len(key) != 1+ed25519.PublicKeySize || key[0] != cosignatureKeyType {
		return nil, fmt.Errorf("witness key %q is not a cosignature/v1 key (type 0x%02x and an Ed25519 public key)", vkey, cosignatureKeyType)
	}
	s, err := torchwood.NewCosignatureSigner(name, verifyOnly(key[1:]))
	if err != nil {
		return nil, fmt.Errorf("witness key %q: %w", vkey, err)
	}
	v := s.Verifier()
	if v.KeyHash() != uint32(hash) || v.String() != vkey {
		return nil, fmt.Errorf("witness key %q: its key hash %s is not the key's (%08x)", vkey, hash16, v.KeyHash())
	}
	return v, nil
}

// verifyOnly is an Ed25519 public key as the crypto.Signer that
// torchwood.NewCosignatureSigner takes: its Verifier is all that is
// used, so it never signs.
type verifyOnly ed25519.PublicKey

func (k verifyOnly) Public() crypto.PublicKey { return ed25519.PublicKey(k) }

func (k verifyOnly) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("a witness's verifier key cannot sign")
}

// AppendCosignatures adds witnesses' cosignature lines (as AddCheckpoint
// returns them) to a signed checkpoint. A witness's newer cosignature
// (same key name and hash) replaces its older one. It checks the form of
// the lines, not the signatures: CountCosignatures does.
func AppendCosignatures(signedCheckpoint []byte, cosigs ...[]byte) ([]byte, error) {
	n, err := openUnverified(signedCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	sigs := n.UnverifiedSigs
	for i, c := range cosigs {
		added, err := signatureLines(signedCheckpoint, c)
		if err != nil {
			return nil, fmt.Errorf("cosignature %d: %w", i+1, err)
		}
	add:
		for _, a := range added {
			for j, s := range sigs {
				if s.Name == a.Name && s.Hash == a.Hash {
					sigs[j] = a
					continue add
				}
			}
			sigs = append(sigs, a)
		}
	}
	var b strings.Builder
	b.WriteString(n.Text)
	b.WriteByte('\n')
	for _, s := range sigs {
		fmt.Fprintf(&b, "— %s %s\n", s.Name, s.Base64)
	}
	out := []byte(b.String())
	if _, err := openUnverified(out); err != nil {
		return nil, fmt.Errorf("checkpoint with %d signatures: %w", len(sigs), err)
	}
	return out, nil
}

// signatureLines parses lines, note signature lines, as signatures of
// the text of signedCheckpoint.
func signatureLines(signedCheckpoint, lines []byte) ([]note.Signature, error) {
	n, err := openUnverified(signedCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if len(lines) == 0 {
		return nil, errors.New("no signature line")
	}
	withLines, err := openUnverified([]byte(n.Text + "\n" + string(lines)))
	if err != nil || withLines.Text != n.Text {
		return nil, fmt.Errorf("%q are not note signature lines (\"— name base64\", each ending with a newline)", lines)
	}
	return withLines.UnverifiedSigs, nil
}

// openUnverified parses a signed note without checking its signatures.
func openUnverified(msg []byte) (*note.Note, error) {
	_, err := note.Open(msg, note.VerifierList())
	var unverified *note.UnverifiedNoteError
	if !errors.As(err, &unverified) {
		return nil, fmt.Errorf("not a signed note: %v", err)
	}
	return unverified.Note, nil
}

// CountCosignatures checks a signed checkpoint: it must carry a good
// signature of logKey (as OpenCheckpoint checks it), and every
// cosignature in it of the witnesses (ParseWitnessKey's verifiers) must
// verify. It returns how many of the witnesses cosigned it and when the
// newest of them did (the zero time if none did): what a log checks
// before it serves a checkpoint, and a monitor to know that the
// witnesses saw it lately. Other keys' signatures are ignored.
func CountCosignatures(signedCheckpoint []byte, logKey note.Verifier, witnesses []note.Verifier) (n int, newest time.Time, err error) {
	if _, err := OpenCheckpoint(signedCheckpoint, logKey); err != nil {
		return 0, time.Time{}, err
	}
	var known []note.Verifier
	seen := map[string]bool{keyID(logKey): true}
	for _, w := range witnesses {
		if _, ok := w.(*torchwood.CosignatureVerifier); !ok {
			return 0, time.Time{}, fmt.Errorf("witness key %s is not a cosignature/v1 key (ParseWitnessKey)", keyID(w))
		}
		if !seen[keyID(w)] {
			seen[keyID(w)] = true
			known = append(known, w)
		}
	}
	cosigned, err := note.Open(signedCheckpoint, note.VerifierList(known...))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return 0, time.Time{}, nil
	case errors.As(err, &invalid):
		return 0, time.Time{}, fmt.Errorf("checkpoint: %w: the witness %s+%08x", ErrBadCosignature, invalid.Name, invalid.Hash)
	case err != nil:
		return 0, time.Time{}, fmt.Errorf("checkpoint: %w", err)
	}
	for _, s := range cosigned.Sigs {
		ts, err := torchwood.CosignatureTimestamp(s)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("checkpoint: %w: the witness %s+%08x: %v", ErrBadCosignature, s.Name, s.Hash, err)
		}
		if t := time.Unix(ts, 0); t.After(newest) {
			newest = t
		}
	}
	return len(cosigned.Sigs), newest, nil
}
