// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestCosignaturesCount: two witnesses cosign a checkpoint; the log
// appends both, and counts 2 with their keys; one key alone counts 1; a
// newer cosignature of a witness replaces its older one; a cosignature
// that does not verify, or a checkpoint the log did not sign, is an
// error, not a count.
func TestCosignaturesCount(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 7)
	w1 := newTestWitness(t, "witness.weir.test/w1", l.v)
	w2 := newTestWitness(t, "witness.weir.test/w2", l.v)
	cp := l.checkpoint(t, 7)
	c1, _, err := w1.add(t, l, 0, nil, cp)
	if err != nil {
		t.Fatal(err)
	}
	c2, _, err := w2.add(t, l, 0, nil, cp)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := witnessKey(t, w1), witnessKey(t, w2)
	both, err := transparency.AppendCosignatures(cp, c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		keys []note.Verifier
		want int
	}{
		{"both", []note.Verifier{k1, k2}, 2},
		{"w2", []note.Verifier{k2}, 1},
		{"w1 twice", []note.Verifier{k1, k1}, 1},
		{"none", nil, 0},
	} {
		n, when, err := transparency.CountCosignatures(both, l.v, c.keys)
		if err != nil || n != c.want || (n > 0) == when.IsZero() {
			t.Errorf("%s: %d cosignatures at %v, %v; want %d", c.name, n, when, err, c.want)
		}
	}
	// The witness's own verifier (torchwood's, from its signer) agrees.
	if _, err := note.Open(both, note.VerifierList(w1.w.Verifier(), w2.w.Verifier())); err != nil {
		t.Errorf("the witnesses' own verifiers: %v", err)
	}

	// A newer cosignature of w1: its key name and hash, other bytes.
	name, b64, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(string(c1), "\n"), "— "), " ")
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-1] ^= 1
	newer := []byte("— " + name + " " + base64.StdEncoding.EncodeToString(sig) + "\n")
	renewed, err := transparency.AppendCosignatures(both, newer)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(renewed, []byte("\n— ")); got != 3 || !bytes.Contains(renewed, newer) || bytes.Contains(renewed, c1) || !bytes.Contains(renewed, c2) {
		t.Errorf("w1's newer cosignature appended: %d signature lines in %q, want the log's, w1's newer and w2's", got, renewed)
	}
	// That one does not verify (its bytes were flipped): an error.
	if _, _, err := transparency.CountCosignatures(renewed, l.v, []note.Verifier{k1, k2}); err == nil || !strings.Contains(err.Error(), "witness.weir.test/w1") {
		t.Errorf("a bad cosignature of w1: %v", err)
	}
	if n, _, err := transparency.CountCosignatures(renewed, l.v, []note.Verifier{k2}); err != nil || n != 1 {
		t.Errorf("w2's alone, beside w1's bad one: %d, %v; want 1", n, err)
	}
	_, impostorKey := logKey(t, witnessOrigin)
	if _, _, err := transparency.CountCosignatures(both, impostorKey, []note.Verifier{k1}); err == nil {
		t.Error("a checkpoint counted against another log key")
	}
	if _, _, err := transparency.CountCosignatures(both, l.v, []note.Verifier{l.v}); err == nil || !strings.Contains(err.Error(), "not a cosignature/v1 key") {
		t.Errorf("a log key as a witness key: %v", err)
	}
}

func witnessKey(t *testing.T, tw *testWitness) note.Verifier {
	t.Helper()
	v, err := transparency.ParseWitnessKey(tw.w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAppendCosignaturesRefuses: what is not a signed checkpoint, or not
// signature lines, is not appended.
func TestAppendCosignaturesRefuses(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 2)
	cp := l.checkpoint(t, 2)
	line := "— witness.weir.test/w1 " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 76)) + "\n"
	for _, c := range []struct {
		name  string
		cp    []byte
		lines string
		want  string
	}{
		{"unsigned checkpoint", []byte("a\n1\nAAAA\n"), line, "not a signed note"},
		{"no lines", cp, "", "no signature line"},
		{"no newline", cp, strings.TrimSuffix(line, "\n"), "not note signature lines"},
		{"an empty line", cp, line + "\n" + line, "not note signature lines"},
		{"not a signature", cp, "witness.weir.test/w1 AAAA\n", "not note signature lines"},
		{"bad base64", cp, "— w1 !!!!\n", "not note signature lines"},
		{"over 100 signatures", cp, manyLines(100), "not a signed note"},
	} {
		if _, err := transparency.AppendCosignatures(c.cp, []byte(c.lines)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	out, err := transparency.AppendCosignatures(cp, []byte(line), []byte(line))
	if err != nil || !bytes.Equal(out, append(cp, line...)) {
		t.Errorf("a line appended twice: %q, %v; want it once", out, err)
	}
}

// manyLines is n signature lines of n different keys.
func manyLines(n int) string {
	var b strings.Builder
	for i := range n {
		sig := bytes.Repeat([]byte{byte(i)}, 76)
		b.WriteString("— w" + strings.Repeat("x", i) + " " + base64.StdEncoding.EncodeToString(sig) + "\n")
	}
	return b.String()
}

// TestParseWitnessKey: a witness's verifier key reads back as a
// torchwood cosignature/v1 verifier; a log's (Ed25519) key, a wrong key
// hash and what is not a key are refused.
func TestParseWitnessKey(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 1)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	vkey := tw.w.VerifierKey()
	v, err := transparency.ParseWitnessKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if cv, ok := v.(*torchwood.CosignatureVerifier); !ok || cv.String() != vkey || v.Name() != "witness.weir.test/w1" {
		t.Errorf("ParseWitnessKey(%q) = %#v", vkey, v)
	}
	_, logVKey, err := transparency.NewNoteSigner(witnessOrigin, tw.key)
	if err != nil {
		t.Fatal(err)
	}
	name, rest, _ := strings.Cut(vkey, "+")
	hash, key, _ := strings.Cut(rest, "+")
	for _, c := range []struct{ name, vkey, want string }{
		{"the log's Ed25519 key", logVKey, "not a cosignature/v1 key"},
		{"wrong key hash", name + "+00000000+" + key, "its key hash 00000000 is not the key's"},
		{"short hash", name + "+" + hash[:7] + "+" + key, "not name+hash+base64"},
		{"no name", "+" + hash + "+" + key, "not name+hash+base64"},
		{"name with a space", "a b+" + hash + "+" + key, "invalid name"},
		{"not base64", name + "+" + hash + "+!!", "not name+hash+base64"},
		{"empty", "", "not name+hash+base64"},
	} {
		if _, err := transparency.ParseWitnessKey(c.vkey); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
