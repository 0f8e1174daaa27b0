// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// logOn turns the verifiable log on, integrating every 100 ms.
func logOn(c *server.Config) {
	c.Transparency.Enabled = true
	c.Transparency.Interval = 100 * time.Millisecond
}

// logVerifier is the verifier key weir wrote for e's log.
func logVerifier(t *testing.T, e *env) note.Verifier {
	t.Helper()
	b, err := os.ReadFile(server.LogVerifierKeyFile(e.cfg))
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// weirOffline runs a weir command that works without a configuration
// (the log's verbs that read a served log or files) and returns its
// output.
func weirOffline(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := builder.Run(t, args, &stdout, &stderr); code != wantCode {
		t.Fatalf("weir %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}

// waitLogSize waits (bounded) until e's log has integrated at least want
// entries and returns them all, with the checkpoint of their size,
// opened, whose root it checks against the entries.
func waitLogSize(t *testing.T, e *env, v note.Verifier, want int64) ([]transparency.Entry, transparency.Checkpoint) {
	t.Helper()
	st := e.srv.Store()
	var size int64
	var head []byte
	for range 600 { // 600 × 50 ms: the sequencer runs every 100 ms
		var err error
		if size, head, err = st.LogHead(t.Context()); err != nil {
			t.Fatal(err)
		}
		if size >= want {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if size < want {
		t.Fatalf("the log holds %d entries, want %d", size, want)
	}
	want = size
	c, err := transparency.OpenCheckpoint(head, v)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.LogEntries(t.Context(), 0, int(want))
	if err != nil || int64(len(raw)) != want {
		t.Fatalf("LogEntries: %d, %v", len(raw), err)
	}
	hashes := make([]tlog.Hash, 0, tlog.StoredHashCount(want))
	var out []transparency.Entry
	for i, b := range raw {
		e, err := transparency.ParseEntry(b)
		if err != nil {
			t.Fatalf("entry %d does not parse: %v", i, err)
		}
		out = append(out, e)
		hs, err := tlog.StoredHashes(int64(i), b, tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
			r := make([]tlog.Hash, len(ix))
			for j, x := range ix {
				r[j] = hashes[x]
			}
			return r, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
	}
	root, err := tlog.TreeHash(want, tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		r := make([]tlog.Hash, len(ix))
		for j, x := range ix {
			r[j] = hashes[x]
		}
		return r, nil
	}))
	if err != nil || root != c.Hash {
		t.Fatalf("the entries' tree has root %x (%v), the checkpoint %x", root, err, c.Hash)
	}
	return out, c
}

// TestVerifiableLog: with the log on, the start, each issuance, each
// revocation (an account's and an administrator's), the administrator's
// action and a reload each become one entry, in the order they happened,
// integrated by the sequencer into a tree whose checkpoint verifies with
// the verifier key weir wrote; the log's state is on /metrics.
func TestVerifiableLog(t *testing.T) {
	e := startEnv(t, logOn)
	v := logVerifier(t, e)
	if want := strings.TrimPrefix(e.srv.BaseURL(), "https://") + "/log"; v.Name() != want {
		t.Errorf("the log's origin is %q, want %q (the external URL's host)", v.Name(), want)
	}
	ctx, _, c, acct := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "a.weir.test"})
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonSuperseded); err != nil {
		t.Fatal(err)
	}
	chain2, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "b.weir.test"})
	leaf2, _ := x509.ParseCertificate(chain2[0])
	serial2 := ca.SerialHex(leaf2.SerialNumber)
	e.cli.Run(t, 0, "certs", "revoke", serial2, "--reason", "keyCompromise")
	e.reloadWith(func(c *server.Config) { c.CA.Policy.DeniedDomains = []string{"blocked.test"} })

	entries, cp := waitLogSize(t, e, v, 7)
	var kinds []string
	for i, en := range entries {
		if i >= 7 && en.Event != nil && en.Event.Type == "config-reload" {
			continue // the file watcher may see the edit again
		}
		k := en.Kind
		if en.Event != nil {
			k += ":" + en.Event.Type
		}
		kinds = append(kinds, k)
	}
	want := []string{"event:server-started", "issued", "revoked", "issued", "revoked", "event:admin-action", "event:config-reload"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("the log's entries are %v, want %v", kinds, want)
	}
	if got := entries[1].Issued; string(got.Certificate) != string(chain[0]) || got.Account != e.accountID(acct.URI) ||
		len(got.Validations) != 1 || got.Validations[0].Method != "http-01" {
		t.Errorf("the first issuance's entry: %+v", got)
	}
	if got := entries[4]; got.Revoked.Serial != serial2 || got.Revoked.Reason != 1 || got.Actor.Kind != "admin" {
		t.Errorf("the administrator's revocation's entry: %+v", got)
	}
	// Served as tlog-tiles on the plain-HTTP listener, audited from
	// outside, and an issuance proven by serial and checked offline.
	vkeyFile := "@" + server.LogVerifierKeyFile(e.cfg)
	if out := weirOffline(t, 0, "log", "verify", "-key", vkeyFile, "-url", e.artefacts+"/log"); !strings.Contains(out, "verifies: ") {
		t.Errorf("weir log verify: %s", out)
	}
	state := filepath.Join(t.TempDir(), "monitor.state")
	weirOffline(t, 0, "log", "monitor", "-once", "-key", vkeyFile, "-url", e.artefacts+"/log", "-state", state)
	proof := filepath.Join(t.TempDir(), "proof.json")
	e.cli.Run(t, 0, "log", "prove", serial2, "-o", proof)
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain2[0]}), 0o644); err != nil {
		t.Fatal(err)
	}
	weirOffline(t, 0, "log", "check-proof", "-key", vkeyFile, "-cert", certFile, proof)
	otherCert := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(otherCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain[0]}), 0o644); err != nil {
		t.Fatal(err)
	}
	weirOffline(t, 1, "log", "check-proof", "-key", vkeyFile, "-cert", otherCert, proof)
	e.cli.Run(t, 1, "log", "prove", "0badc0de")
	// The monitor follows the grown log from the checkpoint it holds.
	e.reloadWith(func(c *server.Config) { c.CA.Policy.DeniedDomains = []string{"blocked2.test"} })
	waitLogSize(t, e, v, cp.Size+1)
	if out := weirOffline(t, 0, "log", "monitor", "-once", "-key", vkeyFile, "-url", e.artefacts+"/log", "-state", state); !strings.Contains(out, "ok: "+v.Name()+" tree of size") {
		t.Errorf("weir log monitor after growth: %s", out)
	}
	sc := scrapeServer(t, e.srv)
	// The server's file watcher may record one more reload by now: the
	// metrics are checked against each other and the size seen above.
	size := sc["weir_log_tree_size"]
	if size == nil || size.GetMetric()[0].GetGauge().GetValue() < float64(cp.Size) {
		t.Fatalf("weir_log_tree_size: %v, want at least %d", size, cp.Size)
	}
	if f := sc["weir_log_integration_lag_seconds"]; f == nil || float64(f.GetMetric()[0].GetHistogram().GetSampleCount()) != size.GetMetric()[0].GetGauge().GetValue() {
		t.Errorf("weir_log_integration_lag_seconds: %v, want one sample per integrated entry (%v)", f, size)
	}
	if f := sc["weir_log_oldest_pending_seconds"]; f == nil || f.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Errorf("weir_log_oldest_pending_seconds: %v, want 0 with nothing pending", f)
	}
}

// TestLogBackup: weir backup carries the log (its tables, in the store's
// snapshot) and its key; weir started on the copy has the same log, its
// key still verifies the latest checkpoint, and it extends the tree.
func TestLogBackup(t *testing.T) {
	e := startEnv(t, logOn)
	v := logVerifier(t, e)
	ctx, _, c, _ := e.Registered(t)
	e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "backup.weir.test"})
	_, cp := waitLogSize(t, e, v, 2)
	out := filepath.Join(t.TempDir(), "backup")
	listing := e.cli.Run(t, 0, "backup", "-out", out)
	for _, f := range []string{"transparency/log-key.pem", "transparency/log-key.vkey"} {
		if !strings.Contains(listing, "  "+f+"\n") {
			t.Errorf("weir backup does not list %s:\n%s", f, listing)
		}
	}
	e.stop()
	restored := startEnv(t, func(c *server.Config) {
		logOn(c)
		c.DataDir = out
	})
	// The restored server's start is one more entry, signed by the same key.
	entries, again := waitLogSize(t, restored, v, cp.Size+1)
	if entries[cp.Size].Event == nil || entries[cp.Size].Event.Type != "server-started" {
		t.Errorf("the entry after the backup's: %+v, want the restored server's start", entries[cp.Size])
	}
	if again.Size != cp.Size+1 {
		t.Errorf("the restored log's size is %d, want %d", again.Size, cp.Size+1)
	}
}
