// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/acme/transparency/monitortest"
)

// newWitness is a witness's cosignature signer and the verifier
// ParseWitnessKey reads from its key.
func newWitness(t *testing.T, name string) (*torchwood.CosignatureSigner, note.Verifier) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := torchwood.NewCosignatureSigner(name, key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := transparency.ParseWitnessKey(s.Verifier().String())
	if err != nil {
		t.Fatal(err)
	}
	if v.Name() != name || v.KeyHash() != s.KeyHash() {
		t.Fatalf("verifier %s+%08x, want %s+%08x", v.Name(), v.KeyHash(), name, s.KeyHash())
	}
	return s, v
}

// TestMonitorWitnesses requires one of two witnesses' cosignatures: a
// checkpoint without is not verified (stale beyond the bound), one whose
// newest cosignature is older than the bound is stale, and a forged
// cosignature is a bad signature.
func TestMonitorWitnesses(t *testing.T) {
	e := newMonitorEnv(t)
	e.clock.t = time.Now().UTC() // cosignatures carry the real time
	w1, v1 := newWitness(t, "witness.example/w1")
	_, v2 := newWitness(t, "witness.example/w2")
	entries := monitortest.EventEntries(t, "witnessed", 0, 20)
	cfg := transparency.MonitorConfig{Witnesses: []note.Verifier{v1, v2}, MinWitnesses: 1, Stale: 5 * time.Minute}

	twice := cfg
	twice.Witnesses = []note.Verifier{v1, v2, v1}
	twice.LogKey, twice.StatePath = e.key, e.state
	twice.Log, _ = transparency.NewTileFetcher(e.srv.URL, nil)
	if _, err := transparency.NewMonitor(twice); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("NewMonitor with a witness key twice: %v, want an error", err)
	}

	e.srv.Serve(monitortest.Files(t, entries[:10], e.signer, w1))
	m := e.monitor(t, cfg)
	if r := checkOK(t, m, 10); r.Cosigned.Before(e.clock.Now().Truncate(time.Second)) {
		t.Errorf("newest cosignature at %v, want no earlier than the monitor's start %v", r.Cosigned, e.clock.Now())
	}

	// Not cosigned: not verified, a transient failure within the bound.
	e.serve(t, entries[:15])
	r, err := m.Check(context.Background())
	if r.Alarm != nil || err == nil || !strings.Contains(err.Error(), "0 of the witnesses, 1 required") {
		t.Fatalf("a checkpoint without cosignatures: alarm %v, error %v; want an error", r.Alarm, err)
	}
	if r.Checkpoint.Size != 10 {
		t.Errorf("an uncosigned checkpoint is held (size %d)", r.Checkpoint.Size)
	}
	e.clock.Add(30 * time.Minute) // far more than the test can take in real time
	checkAlarm(t, m, transparency.ReasonStale, "0 of the witnesses")

	// Cosigned, but long ago (as the monitor's clock has it).
	e.srv.Serve(monitortest.Files(t, entries[:15], e.signer, w1))
	checkAlarm(t, m, transparency.ReasonStale, "newest witness cosignature", "more than the bound 5m0s")

	// A forged cosignature of a configured witness.
	e.clock.t = time.Now().UTC()
	files := monitortest.Files(t, entries, e.signer, w1)
	files[transparency.CheckpointPath] = forgeSignature(t, files[transparency.CheckpointPath], w1.Name())
	e.srv.Serve(files)
	checkAlarm(t, m, transparency.ReasonBadSignature, "a witness's cosignature does not verify: the witness witness.example/w1")
}

// forgeSignature alters the signature bytes of name's signature line in
// the signed note msg, keeping its key hash.
func forgeSignature(t *testing.T, msg []byte, name string) []byte {
	t.Helper()
	prefix := []byte("\u2014 " + name + " ")
	i := bytes.Index(msg, prefix)
	if i < 0 {
		t.Fatalf("no signature of %s in %q", name, msg)
	}
	start := i + len(prefix)
	end := start + bytes.IndexByte(msg[start:], '\n')
	sig, err := base64.StdEncoding.DecodeString(string(msg[start:end]))
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-1] ^= 1
	return slices.Concat(msg[:start], []byte(base64.StdEncoding.EncodeToString(sig)), msg[end:])
}
