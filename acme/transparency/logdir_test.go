// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
	"github.com/weir-pki/weir/storage/sqlite"
)

// The logs the serving, proof and audit tests work on: entries of every
// kind, in a real store through the Sequencer, or laid out as a
// tlog-tiles directory.

// certOf is a certificate with serial for n<serial>.weir.test.
func certOf(t testing.TB, key *ecdsa.PrivateKey, serial int64) []byte {
	t.Helper()
	name := fmt.Sprintf("n%d.weir.test", serial)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Unix(1_800_000_000, 0), NotAfter: time.Unix(1_800_086_400, 0),
		DNSNames: []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// logEntry is entry i of a test log: an issuance of the certificate of
// serial 1000+i, a revocation or an event, in turn.
func logEntry(t testing.TB, key *ecdsa.PrivateKey, i int) []byte {
	t.Helper()
	e := transparency.Entry{V: 1, Time: at.Add(time.Duration(i) * time.Second), Actor: transparency.Actor{Kind: "system"}}
	switch i % 3 {
	case 0:
		name := fmt.Sprintf("n%d.weir.test", 1000+i)
		e.Kind, e.Actor = transparency.KindIssued, transparency.Actor{Kind: "account", ID: "acct1"}
		e.Issued = &transparency.Issued{Certificate: certOf(t, key, int64(1000+i)), Issuer: "default", Account: "acct1", Order: fmt.Sprintf("ord%d", i),
			Validations: []transparency.Validation{{Name: name, Method: "http-01"}}}
	case 1:
		e.Kind = transparency.KindRevoked
		e.Revoked = &transparency.Revoked{Serial: fmt.Sprintf("%04x", 1000+i-1), Issuer: "default", Reason: 1}
	default:
		e.Kind = transparency.KindEvent
		e.Event = &transparency.Event{Type: "config-reload", Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
	}
	b, err := transparency.EncodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// logEntries are entries first … first+n-1 of a test log.
func logEntries(t testing.TB, first, n int) [][]byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = logEntry(t, key, first+i)
	}
	return out
}

// sequencedLog is a SQLite store holding es, integrated by the Sequencer
// in batches of 100, and the log key.
func sequencedLog(t *testing.T, es [][]byte) (*sqlite.Store, note.Signer, note.Verifier) {
	t.Helper()
	_, st, _ := sequencerOn(t)
	signer, v := sequenceInto(t, st, es)
	return st, signer, v
}

// postgresStore is a PostgreSQL store on a fresh schema of the test
// server (skipped without WEIR_TEST_POSTGRES_DSN).
func postgresStore(t *testing.T) *postgres.Store {
	t.Helper()
	_, dsn := pgtest.Schema(t, "weir_tlog_")
	st, err := postgres.Open(t.Context(), postgres.Config{DSN: dsn, MaxConns: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sequenceInto writes es to st and integrates them with the Sequencer in
// batches of 100, under a new log key, which it returns.
func sequenceInto(t *testing.T, st transparency.Store, es [][]byte) (note.Signer, note.Verifier) {
	t.Helper()
	signer, v := logKey(t, "ca.weir.test/log")
	seq := &transparency.Sequencer{Store: st, Signer: signer, MaxBatch: 100}
	for _, e := range es {
		if err := st.AppendLogEntry(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	for range len(es)/seq.MaxBatch + 2 { // every call integrates a batch, or none is left
		if _, _, err := seq.Integrate(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if size, _, err := st.LogHead(t.Context()); err != nil || size != int64(len(es)) {
		t.Fatalf("the log's size is %d (%v), want %d", size, err, len(es))
	}
	return signer, v
}

// writeLogDir lays out the log of es in dir as tlog-tiles, with its
// checkpoint signed by signer, and returns the checkpoint.
func writeLogDir(t *testing.T, dir string, es [][]byte, signer note.Signer) []byte {
	t.Helper()
	m := &memLog{}
	m.add(t, es...)
	cp, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: signer.Name(), Size: m.size(), Hash: m.root(t)}, signer)
	if err != nil {
		t.Fatal(err)
	}
	put(t, dir, transparency.CheckpointPath, cp)
	for _, tile := range tlog.NewTiles(transparency.TileHeight, 0, m.size()) {
		data, err := tlog.ReadTileData(tile, m)
		if err != nil {
			t.Fatal(err)
		}
		put(t, dir, transparency.TilePath(tile), data)
	}
	for n := int64(0); n<<transparency.TileHeight < m.size(); n++ {
		tile := transparency.EntryTile(n<<transparency.TileHeight, m.size())
		start := tile.N << transparency.TileHeight
		data, err := transparency.EntryBundle(es[start : start+int64(tile.W)])
		if err != nil {
			t.Fatal(err)
		}
		put(t, dir, transparency.TilePath(tile), data)
	}
	return cp
}

// put writes data at the tlog-tiles path p under dir.
func put(t *testing.T, dir, p string, data []byte) {
	t.Helper()
	f := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// logKeys are a log's signer and verifier.
type logKeys struct {
	signer   note.Signer
	verifier note.Verifier
}

// serialHex is a certificate's serial, lowercase hex.
func serialHex(t *testing.T, der []byte) string {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", c.SerialNumber)
}

// entryCert is the certificate of an issuance entry.
func entryCert(t *testing.T, entry []byte) []byte {
	t.Helper()
	e, err := transparency.ParseEntry(entry)
	if err != nil || e.Issued == nil {
		t.Fatalf("not an issuance entry: %s (%v)", entry, err)
	}
	return e.Issued.Certificate
}
