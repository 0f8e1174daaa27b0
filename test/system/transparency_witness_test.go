// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// flakyWitness is a weir witness over HTTP on loopback that the test
// takes down (503) and brings back.
type flakyWitness struct {
	*transparency.Witness
	url  string
	down atomic.Bool
}

func startWitness(t *testing.T, logVKey string) *flakyWitness {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wc := transparency.WitnessConfig{Name: "witness.weir.test/w1", Key: key, StatePath: filepath.Join(t.TempDir(), "witness.state")}
	if err := wc.AddLogKey(logVKey); err != nil {
		t.Fatal(err)
	}
	if err := transparency.InitWitnessState(wc.StatePath); err != nil {
		t.Fatal(err)
	}
	w, err := transparency.NewWitness(wc)
	if err != nil {
		t.Fatal(err)
	}
	fw := &flakyWitness{Witness: w}
	h := w.Handler(slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if fw.down.Load() {
			http.Error(rw, "down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	fw.url = srv.URL
	return fw
}

// servedCheckpoint fetches the checkpoint e serves and opens it; size -1
// while none is served (a 404).
func servedCheckpoint(t *testing.T, e *env, v note.Verifier) ([]byte, transparency.Checkpoint) {
	t.Helper()
	res, err := http.Get(e.artefacts + "/log/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode == http.StatusNotFound {
		return nil, transparency.Checkpoint{Size: -1}
	}
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /log/checkpoint: %d %s %v", res.StatusCode, b, err)
	}
	c, err := transparency.OpenCheckpoint(b, v)
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

// TestLogWitnesses: with a witness required, the checkpoint served
// carries its cosignature, and weir log monitor requiring it accepts the
// log; while the witness is down the tree grows but the served
// checkpoint stays the last cosigned one (no tile beyond it is served);
// once the witness is back it cosigns the grown tree, from the size it
// held, and that is served.
func TestLogWitnesses(t *testing.T) {
	dataDir := t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := ca.EncodeKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dataDir, "transparency"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "transparency", "log-key.pem"), pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	const origin = "ca.weir.test/log"
	_, vkey, err := transparency.NewNoteSigner(origin, key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	w := startWitness(t, vkey)
	e := startEnv(t, func(c *server.Config) {
		logOn(c)
		c.DataDir, c.Transparency.Origin = dataDir, origin
		c.Transparency.Witnesses = []server.LogWitness{{URL: w.url, Key: w.VerifierKey()}}
		c.Transparency.WitnessesRequired, c.Transparency.WitnessInterval = 1, 200*time.Millisecond
	})
	ctx, _, c, _ := e.Registered(t)
	e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "w1.weir.test"})
	waitLogSize(t, e, v, 2)
	cosigned := func(want int64) transparency.Checkpoint {
		t.Helper()
		for range 300 { // 300 × 50 ms
			b, cp := servedCheckpoint(t, e, v)
			if cp.Size < 0 {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if n, _, err := transparency.CountCosignatures(b, v, []note.Verifier{w.Verifier()}); err == nil && n == 1 && cp.Size >= want {
				return cp
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("no checkpoint of size %d or more cosigned by the witness was served", want)
		return transparency.Checkpoint{}
	}
	first := cosigned(2)
	vkeyFile := filepath.Join(t.TempDir(), "log.vkey")
	if err := os.WriteFile(vkeyFile, []byte(vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "monitor.state")
	weirOffline(t, 0, "log", "monitor", "-once", "-key", "@"+vkeyFile, "-url", e.artefacts+"/log", "-state", state,
		"-witness-key", w.VerifierKey(), "-witnesses", "1")

	w.down.Store(true)
	e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "w2.weir.test"})
	grown, _ := waitLogSize(t, e, v, first.Size+1)
	time.Sleep(500 * time.Millisecond) // several cosigner rounds with the witness down
	if _, cp := servedCheckpoint(t, e, v); cp.Size != first.Size {
		t.Fatalf("with the witness down the served checkpoint has size %d, want the last cosigned %d (the tree has %d)", cp.Size, first.Size, len(grown))
	}
	beyond := e.artefacts + "/log/" + transparency.TilePath(transparency.EntryTile(int64(len(grown))-1, int64(len(grown))))
	res, err := http.Get(beyond)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("GET %s beyond the served checkpoint: %s, want 404", beyond, res.Status)
	}
	w.down.Store(false)
	cosigned(int64(len(grown)))
	weirOffline(t, 0, "log", "monitor", "-once", "-key", "@"+vkeyFile, "-url", e.artefacts+"/log", "-state", state,
		"-witness-key", w.VerifierKey(), "-witnesses", "1")
}
