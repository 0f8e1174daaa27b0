// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

// algCosignatureV1 is the signed-note key type of a C2SP
// tlog-cosignature/v1 witness key.
const algCosignatureV1 = 4

// NewCosignatureVerifier reads a witness's verifier key, a C2SP
// tlog-cosignature/v1 key in the signed-note vkey form
// ("name+hash+base64(0x04 || Ed25519 public key)", what
// torchwood.CosignatureVerifier's String writes), and returns the
// note.Verifier of its cosignatures: each is an 8-byte timestamp and an
// Ed25519 signature of "cosignature/v1\ntime <timestamp>\n" and the
// checkpoint. torchwood v0.6.1 makes such verifiers only from a signer;
// golang.org/x/mod's note reads only Ed25519 (type 1) keys.
func NewCosignatureVerifier(vkey string) (note.Verifier, error) {
	name, rest, _ := strings.Cut(vkey, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	hash, err1 := strconv.ParseUint(hash16, 16, 32)
	key, err2 := base64.StdEncoding.Strict().DecodeString(key64)
	if name == "" || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsSpace) >= 0 || len(hash16) != 8 || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("witness key %q: not a note verifier key (name+hash+base64)", vkey)
	}
	if len(key) != 1+ed25519.PublicKeySize || key[0] != algCosignatureV1 {
		return nil, fmt.Errorf("witness key %q: not a tlog-cosignature/v1 key (type %d and %d bytes of Ed25519 key)", vkey, algCosignatureV1, ed25519.PublicKeySize)
	}
	h := sha256.Sum256(append([]byte(name+"\n"), key...))
	if binary.BigEndian.Uint32(h[:]) != uint32(hash) {
		return nil, fmt.Errorf("witness key %q: its key hash %s does not match its name and key", vkey, hash16)
	}
	return &cosignatureVerifier{name: name, hash: uint32(hash), key: ed25519.PublicKey(key[1:])}, nil
}

// MonitorKeys reads a monitor's keys: the log's note verifier key
// ("name+hash+base64", as NewNoteSigner returns it) and the witnesses'
// tlog-cosignature/v1 keys (NewCosignatureVerifier), for MonitorConfig's
// LogKey and Witnesses.
func MonitorKeys(logKey string, witnessKeys []string) (note.Verifier, []note.Verifier, error) {
	log, err := ParseVerifierKey(logKey)
	if err != nil {
		return nil, nil, fmt.Errorf("log key: %w", err)
	}
	var witnesses []note.Verifier
	for _, k := range witnessKeys {
		w, err := NewCosignatureVerifier(k)
		if err != nil {
			return nil, nil, err
		}
		witnesses = append(witnesses, w)
	}
	return log, witnesses, nil
}

// cosignatureVerifier verifies a witness's tlog-cosignature/v1
// cosignatures.
type cosignatureVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (v *cosignatureVerifier) Name() string    { return v.name }
func (v *cosignatureVerifier) KeyHash() uint32 { return v.hash }

// Verify checks sig, a timestamp and a signature, over msg, a
// checkpoint's text.
func (v *cosignatureVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	signed := fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, msg)
	return ed25519.Verify(v.key, signed, sig[8:])
}

// witnessed is what a checkpoint's cosignatures say: how many of the
// configured witnesses cosigned it and when the newest of them did.
type witnessed struct {
	count  int
	newest time.Time
}

// errBadCosignature is the cause of a cosignature of a configured
// witness that does not verify: an alarm, as a bad log signature is.
var errBadCosignature = errors.New("a cosignature does not verify")

// cosignatures counts the good cosignatures on msg of the witnesses and
// the time of the newest. A cosignature of a witness's key that does not
// verify is an error wrapping errBadCosignature.
func cosignatures(msg []byte, witnesses []note.Verifier) (witnessed, error) {
	var w witnessed
	n, err := note.Open(msg, note.VerifierList(witnesses...))
	var none *note.UnverifiedNoteError
	if errors.As(err, &none) {
		return w, nil
	}
	var bad *note.InvalidSignatureError
	if errors.As(err, &bad) {
		return w, fmt.Errorf("%w: the cosignature of witness %s+%08x", errBadCosignature, bad.Name, bad.Hash)
	}
	if err != nil {
		return w, err
	}
	for _, s := range n.Sigs {
		ts, err := torchwood.CosignatureTimestamp(s)
		if err != nil {
			return w, fmt.Errorf("%w: the cosignature of witness %s: %v", errBadCosignature, s.Name, err)
		}
		w.count++
		if t := time.Unix(ts, 0).UTC(); t.After(w.newest) {
			w.newest = t
		}
	}
	return w, nil
}
