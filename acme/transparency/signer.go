// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"
)

// noteSigner signs notes with an Ed25519 key held by a crypto.Signer.
type noteSigner struct {
	name string
	hash uint32
	key  crypto.Signer
}

func (s *noteSigner) Name() string    { return s.name }
func (s *noteSigner) KeyHash() uint32 { return s.hash }

// Sign signs msg with pure Ed25519, as a signed note's Ed25519 signature
// is (C2SP signed-note).
func (s *noteSigner) Sign(msg []byte) ([]byte, error) {
	return s.key.Sign(nil, msg, crypto.Hash(0))
}

// NewNoteSigner is the log's note.Signer named name (the log's origin)
// over key, which must hold an Ed25519 key: a file's, or a PKCS#11
// token's through the CA's signer seam (ca.OpenSigner), so that the log
// key is kept as the CA's keys are, and is never one of them. It returns
// the signer and the verifier key that checks its signatures, in the
// note format ("name+hash+base64"): what monitors and witnesses are given.
func NewNoteSigner(name string, key crypto.Signer) (note.Signer, string, error) {
	pub, ok := key.Public().(ed25519.PublicKey)
	if !ok {
		return nil, "", fmt.Errorf("log key: a %T, want an Ed25519 key (C2SP signed-note)", key.Public())
	}
	vkey, err := note.NewEd25519VerifierKey(name, pub)
	if err != nil {
		return nil, "", err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, "", fmt.Errorf("log key: the name %q cannot name a note key: %w", name, err)
	}
	if name == "" {
		return nil, "", errors.New("log key: empty name")
	}
	return &noteSigner{name: name, hash: v.KeyHash(), key: key}, vkey, nil
}
