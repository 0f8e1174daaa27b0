// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// testLog is a log of events and issuances laid out as tlog-tiles in a
// directory, as a mirror keeps it.
type testLog struct {
	dir, vkey string
	signer    note.Signer
	entries   [][]byte
	hashes    []tlog.Hash
	certs     map[int][]byte // the issuances' certificates by index
}

func (l *testLog) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = l.hashes[x]
	}
	return out, nil
}

// newTestLog is a log of n entries, every tenth an issuance, signed by a
// fresh log key.
func newTestLog(t *testing.T, n int) *testLog {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	l := &testLog{dir: t.TempDir(), certs: map[int][]byte{}}
	if l.signer, l.vkey, err = transparency.NewNoteSigner("ca.weir.test/log", priv); err != nil {
		t.Fatal(err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		e := transparency.Entry{V: 1, Kind: transparency.KindEvent, Time: time.Date(2026, 12, 7, 0, 0, i, 0, time.UTC),
			Actor: transparency.Actor{Kind: "admin", ID: "oncall"}, Event: &transparency.Event{Type: "config-reload"}}
		if i%10 == 0 {
			l.certs[i] = certFor(t, caKey, int64(0x100+i))
			e.Kind, e.Event = transparency.KindIssued, nil
			e.Issued = &transparency.Issued{Certificate: l.certs[i], Issuer: "default", Account: "a1", Order: fmt.Sprint("o", i),
				Validations: []transparency.Validation{{Name: "h.weir.test", Method: "http-01"}}}
		}
		b, err := transparency.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := transparency.Append(int64(i), [][]byte{b}, l)
		if err != nil {
			t.Fatal(err)
		}
		l.entries, l.hashes = append(l.entries, b), append(l.hashes, hs...)
	}
	l.write(t)
	return l
}

// certFor is a certificate of h.weir.test with serial.
func certFor(t *testing.T, key *ecdsa.PrivateKey, serial int64) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "h.weir.test"}, DNSNames: []string{"h.weir.test"},
		NotBefore: time.Unix(1_800_000_000, 0), NotAfter: time.Unix(1_800_086_400, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// write lays the log out in l.dir: its signed checkpoint, hash tiles and
// entry bundles.
func (l *testLog) write(t *testing.T) {
	t.Helper()
	size := int64(len(l.entries))
	root, err := tlog.TreeHash(size, l)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	if files["checkpoint"], err = transparency.SignCheckpoint(transparency.Checkpoint{Origin: l.signer.Name(), Size: size, Hash: root}, l.signer); err != nil {
		t.Fatal(err)
	}
	for _, tile := range tlog.NewTiles(transparency.TileHeight, 0, size) {
		if files[transparency.TilePath(tile)], err = tlog.ReadTileData(tile, l); err != nil {
			t.Fatal(err)
		}
		if tile.L == 0 {
			bundle := tlog.Tile{H: tile.H, L: -1, N: tile.N, W: tile.W}
			first := tile.N << transparency.TileHeight
			if files[transparency.TilePath(bundle)], err = transparency.EntryBundle(l.entries[first : first+int64(tile.W)]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p, b := range files {
		writeFile(t, filepath.Join(l.dir, filepath.FromSlash(p)), b)
	}
}

// proof is the inclusion proof of entry i, as ProveSerial makes it.
func (l *testLog) proof(t *testing.T, i int64) transparency.InclusionProof {
	t.Helper()
	p, err := tlog.ProveRecord(int64(len(l.entries)), i, l)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(l.dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	return transparency.InclusionProof{Index: i, Entry: l.entries[i], Proof: p, Checkpoint: cp}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// TestLogVerbs: weir log verify and check-proof against a log directory,
// prove against an admin API answering as weir's will, and each verb's
// usage errors (exit 2) and failures (exit 1, the reason on stderr).
func TestLogVerbs(t *testing.T) {
	l := newTestLog(t, 300)
	tmp := t.TempDir()
	keyFile := filepath.Join(tmp, "log.vkey")
	writeFile(t, keyFile, []byte(l.vkey+"\n"))
	held := filepath.Join(tmp, "held.cp")
	cp, err := os.ReadFile(filepath.Join(l.dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, held, cp)
	good, tampered, revoked := filepath.Join(tmp, "good.json"), filepath.Join(tmp, "tampered.json"), filepath.Join(tmp, "other.json")
	writeJSON(t, good, l.proof(t, 20))
	bad := l.proof(t, 20)
	bad.Index = 21
	writeJSON(t, tampered, bad)
	writeJSON(t, revoked, l.proof(t, 21))
	certPEM, otherCert := filepath.Join(tmp, "cert.pem"), filepath.Join(tmp, "other.der")
	writeFile(t, certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.certs[20]}))
	writeFile(t, otherCert, l.certs[30])
	tokenFile := filepath.Join(tmp, "token")
	writeFile(t, tokenFile, []byte("abcdefghijklmnopq\n"))

	served := l.proof(t, 20)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer abcdefghijklmnopq" || r.URL.EscapedPath() != "/api/v1/log/proof/114" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"no issuance of %s is in the log yet"}`, strings.TrimPrefix(r.URL.Path, "/api/v1/log/proof/"))
			return
		}
		_ = json.NewEncoder(w).Encode(served)
	}))
	t.Cleanup(api.Close)
	proofOut := filepath.Join(tmp, "proved.json")

	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{[]string{"log", "verify", "-key", l.vkey, "-dir", l.dir}, 0, "ok: the log ca.weir.test/log verifies: 300 entries (30 issued, 0 revoked, 270 events)"},
		{[]string{"log", "verify", "-key", "@" + keyFile, "-dir", l.dir, "-checkpoint", held, "-checkpoint", held}, 0, "2 of your checkpoints are consistent with it"},
		{[]string{"log", "check-proof", "-key", l.vkey, good}, 0, "ok: entry 20 is in the log ca.weir.test/log"},
		{[]string{"log", "check-proof", good, "-key", "@" + keyFile, "-cert", certPEM}, 0, "the entry is the issuance of " + certPEM},
		{[]string{"log", "prove", "114", "-admin", api.URL, "-token-file", tokenFile, "-o", proofOut}, 0, "wrote the proof of entry 20 to " + proofOut},
		{[]string{"log", "prove", "114", "-admin", api.URL, "-token-file", tokenFile}, 0, `"index": 20`},
		{[]string{"log", "-h"}, 0, "prove asks its admin API"},

		{[]string{"log", "verify", "-key", l.vkey}, 2, "give one of -url and -dir"},
		{[]string{"log", "verify", "-key", l.vkey, "-dir", l.dir, "-url", "http://127.0.0.1:1/log/"}, 2, "give one of -url and -dir"},
		{[]string{"log", "verify", "-dir", l.dir}, 2, "give -key, the log's verifier key"},
		{[]string{"log", "verify", "-dir", l.dir, "-key", "ca.weir.test/log+0000"}, 2, `-key: "ca.weir.test/log+0000" is not a note verifier key`},
		{[]string{"log", "verify", "-dir", l.dir, "-key", "@" + filepath.Join(tmp, "absent")}, 2, "-key: open "},
		{[]string{"log", "verify", "-dir", l.dir, "-key", l.vkey, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"log", "check-proof", "-key", l.vkey}, 2, "takes one argument"},
		{[]string{"log", "prove"}, 2, "takes one argument"},
		{[]string{"log", "frob"}, 2, `unknown verb "frob"`},

		{[]string{"log", "verify", "-key", l.vkey, "-dir", tmp}, 1, "weir log verify: reading the log's checkpoint: open "},
		{[]string{"log", "verify", "-key", l.vkey, "-dir", l.dir, "-checkpoint", good}, 1, "weir log verify: held checkpoint 1: checkpoint: malformed note"},
		{[]string{"log", "verify", "-key", l.vkey, "-dir", l.dir, "-checkpoint", filepath.Join(tmp, "absent")}, 1, "weir log verify: -checkpoint: open "},
		{[]string{"log", "verify", "-key", l.vkey, "-url", "http://127.0.0.1:1/log/"}, 1, "weir log verify: reading the log's checkpoint: Get "},
		{[]string{"log", "check-proof", "-key", l.vkey, tampered}, 1, "weir log check-proof: proof: the entry is not leaf 21 of the checkpoint's tree of size 300"},
		{[]string{"log", "check-proof", "-key", l.vkey, "-cert", certPEM, revoked}, 1, `proof: entry 21 is of kind "event", not an issuance`},
		{[]string{"log", "check-proof", "-key", l.vkey, "-cert", otherCert, good}, 1, "records the issuance of another certificate (serial 114), not this one (serial 11e)"},
		{[]string{"log", "check-proof", "-key", l.vkey, "-cert", keyFile, good}, 1, "proof: entry 20 records the issuance of another certificate (serial 114), not this one (serial unreadable: "},
		{[]string{"log", "check-proof", "-key", l.vkey, held}, 1, "is not an inclusion proof"},
		{[]string{"log", "prove", "0bad", "-admin", api.URL, "-token-file", tokenFile}, 1, "weir log prove: no issuance of 0bad is in the log yet (HTTP 404)"},
		{[]string{"log", "prove", "114", "-admin", "http://127.0.0.1:1", "-token-file", tokenFile}, 1, "is weir serve running?"},
	} {
		wantCLI(t, tc.args, tc.code, tc.out)
	}
	b, err := os.ReadFile(proofOut)
	if err != nil {
		t.Fatal(err)
	}
	var p transparency.InclusionProof
	if err := json.Unmarshal(b, &p); err != nil || p.Index != 20 || string(p.Entry) != string(l.entries[20]) {
		t.Fatalf("weir log prove -o wrote %s (%v)", b, err)
	}
	if got := proofPath("0a/b c"); got != "/api/v1/log/proof/0a%2Fb%20c" {
		t.Errorf("proofPath = %q", got)
	}
}

// TestLogVerifyTampered: weir log verify exits 1 naming the tile of an
// entry altered in a mirror.
func TestLogVerifyTampered(t *testing.T) {
	l := newTestLog(t, 40)
	l.entries[7] = l.entries[8]
	b, err := transparency.EntryBundle(l.entries)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(l.dir, "tile", "entries", "000.p", "40"), b)
	wantCLI(t, []string{"log", "verify", "-key", l.vkey, "-dir", l.dir}, 1,
		"weir log verify: hash tile tile/0/000.p/40 differs from the tree of the entries served at the hash of entry 7")
}
