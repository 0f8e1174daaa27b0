// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// witnessLog is a log in memory with its key, as the witness sees it.
type witnessLog struct {
	m      *memLog
	signer note.Signer
	v      note.Verifier
}

// newWitnessLog is a log of n entries numbered from first, keyed by a
// fresh key named origin.
func newWitnessLog(t *testing.T, origin string, first, n int) *witnessLog {
	t.Helper()
	s, v := logKey(t, origin)
	l := &witnessLog{m: &memLog{}, signer: s, v: v}
	l.m.add(t, entries(first, n)...)
	return l
}

// checkpoint is the log's signed checkpoint of size n (n ≤ its size).
func (l *witnessLog) checkpoint(t *testing.T, n int64) []byte {
	t.Helper()
	h, err := tlog.TreeHash(n, l.m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: l.signer.Name(), Size: n, Hash: h}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// proof is the consistency proof from size old to size n (RFC 9162
// §2.1.4, tlog.ProveTree).
func (l *witnessLog) proof(t *testing.T, n, old int64) []tlog.Hash {
	t.Helper()
	p, err := tlog.ProveTree(n, old, l.m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testWitness is a witness of logs with a fresh key (named name) and
// state file, served over HTTP.
type testWitness struct {
	name  string
	w     *transparency.Witness
	key   ed25519.PrivateKey
	state string
	srv   *httptest.Server
}

func newTestWitness(t *testing.T, name string, logs ...note.Verifier) *testWitness {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "witness-state.json")
	if err := transparency.InitWitnessState(state); err != nil {
		t.Fatal(err)
	}
	tw := &testWitness{name: name, key: key, state: state}
	tw.w = tw.restart(t, logs...)
	return tw
}

// restart makes the witness anew from its key and state file and serves
// it (the old server is closed).
func (tw *testWitness) restart(t *testing.T, logs ...note.Verifier) *transparency.Witness {
	t.Helper()
	w, err := transparency.NewWitness(transparency.WitnessConfig{Name: tw.name, Key: tw.key, Logs: logs, StatePath: tw.state})
	if err != nil {
		t.Fatal(err)
	}
	if tw.srv != nil {
		tw.srv.Close()
	}
	tw.w = w
	tw.srv = httptest.NewServer(w.Handler(slog.New(slog.DiscardHandler)))
	t.Cleanup(tw.srv.Close)
	return w
}

// add asks the witness through the client for a cosignature of l's
// checkpoint cp, and checks one it gives: it verifies with the witness's
// key (parsed from its verifier key) and was made between the request's
// start and its end.
func (tw *testWitness) add(t *testing.T, l *witnessLog, old int64, proof []tlog.Hash, cp []byte) ([]byte, int64, error) {
	t.Helper()
	before := time.Now()
	cosig, size, err := transparency.AddCheckpoint(context.Background(), tw.srv.Client(), tw.srv.URL, old, proof, cp)
	after := time.Now()
	if err != nil {
		return cosig, size, err
	}
	v, err := transparency.ParseWitnessKey(tw.w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	withCosig, err := transparency.AppendCosignatures(cp, cosig)
	if err != nil {
		t.Fatal(err)
	}
	n, when, err := transparency.CountCosignatures(withCosig, l.v, []note.Verifier{v})
	if err != nil || n != 1 {
		t.Fatalf("the cosignature %q with the witness's key %s: %d cosignatures, %v", cosig, tw.w.VerifierKey(), n, err)
	}
	if when.Unix() < before.Unix() || when.Unix() > after.Unix() {
		t.Errorf("the cosignature's time %v is not the time of signing (between %v and %v)", when, before, after)
	}
	return cosig, size, nil
}

// post sends a raw add-checkpoint body and returns the status, the
// Content-Type and the body of the answer.
func (tw *testWitness) post(t *testing.T, body []byte) (int, string, string) {
	t.Helper()
	resp, err := tw.srv.Client().Post(tw.srv.URL+"/add-checkpoint", "text/plain", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}
