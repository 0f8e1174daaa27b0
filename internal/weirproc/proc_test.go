// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSeedCAModes: SeedCA copies the CA, root.pem and the admin token,
// with keys and token 0600, and refuses a directory without a CA.
func TestSeedCAModes(t *testing.T) {
	from, to := t.TempDir(), filepath.Join(t.TempDir(), "replica")
	files := map[string]os.FileMode{
		"ca/root.pem": 0o644, "ca/root-key.pem": 0o600, "ca/intermediate.pem": 0o644,
		"ca/intermediate-key.pem": 0o600, "root.pem": 0o644, "admin-token": 0o600,
		"tls/key.pem": 0o600, "weir.db": 0o644,
	}
	for name, mode := range files {
		p := filepath.Join(from, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := SeedCA(from, to); err != nil {
		t.Fatal(err)
	}
	for name, mode := range files {
		st, err := os.Stat(filepath.Join(to, filepath.FromSlash(name)))
		if name == "weir.db" || strings.HasPrefix(name, "tls/") {
			if err == nil {
				t.Errorf("%s was copied; each replica keeps its own", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s: mode %04o, want %04o", name, st.Mode().Perm(), mode)
		}
		if b, _ := os.ReadFile(filepath.Join(to, filepath.FromSlash(name))); string(b) != name {
			t.Errorf("%s: content %q", name, b)
		}
	}
	if st, err := os.Stat(filepath.Join(to, "ca")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("ca/: %v, mode %v", err, st.Mode())
	}
	if err := SeedCA(t.TempDir(), t.TempDir()); err == nil {
		t.Error("SeedCA from a directory without a CA succeeded")
	}
}

// replicaConfig is a minimal weir configuration for a test replica.
func replicaConfig(t *testing.T, dataDir, listen, externalURL string) string {
	t.Helper()
	admin, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	// No plain-HTTP listener: two replicas would both want its default
	// port.
	fmt.Fprintf(&b, "data-dir: %q\nserver:\n  listen: %q\n  http: { listen: \"\" }\n", dataDir, listen)
	if externalURL != "" {
		fmt.Fprintf(&b, "  external-url: %q\n", externalURL)
	}
	fmt.Fprintf(&b, "admin:\n  listen: %q\nlog:\n  level: warn\n", admin)
	return b.String()
}

// TestTwoReplicas builds weir and starts two replicas of one CA (the
// second seeded from the first, with the first's external URL): both
// serve the directory, with the first's URLs, over TLS that the first's
// root verifies, and hold the same root and admin token.
func TestTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts weir")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := func(dataDir, externalURL string) *Proc {
		t.Helper()
		listen, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Start(ctx, Options{Bin: bin, DataDir: dataDir, Listen: listen, Config: replicaConfig(t, dataDir, listen, externalURL)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			select {
			case <-p.Exited(): // killed by the test
				return
			default:
			}
			if err := p.Stop(30 * time.Second); err != nil {
				t.Errorf("stopping weir pid %d: %v\n%s", p.PID, err, p.Tail(20))
			}
		})
		return p
	}
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := start(dirA, "")
	if err := SeedCA(dirA, dirB); err != nil {
		t.Fatal(err)
	}
	b := start(dirB, a.Base)

	for _, name := range []string{"root.pem", "ca/intermediate.pem", "admin-token"} {
		ra, errA := os.ReadFile(filepath.Join(dirA, name))
		rb, errB := os.ReadFile(filepath.Join(dirB, name))
		if errA != nil || errB != nil || !bytes.Equal(ra, rb) {
			t.Errorf("%s differs between the replicas (errors %v, %v)", name, errA, errB)
		}
	}
	for _, p := range []*Proc{a, b} {
		c := p.HTTPClient()
		// The first replica's root verifies either replica's certificate.
		c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: a.Roots}
		res, err := c.Get(a.Base + "/directory")
		if err != nil {
			t.Fatalf("replica pid %d: %v", p.PID, err)
		}
		var dir map[string]any
		err = json.NewDecoder(res.Body).Decode(&dir)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("replica pid %d: directory %d: %v", p.PID, res.StatusCode, err)
		}
		if nn, _ := dir["newNonce"].(string); !strings.HasPrefix(nn, a.Base+"/") {
			t.Errorf("replica pid %d: newNonce %q is not under %s", p.PID, nn, a.Base)
		}
		if n, err := p.CPUTicks(); err != nil || n < 0 {
			t.Errorf("replica pid %d: CPUTicks %d, %v", p.PID, n, err)
		}
	}

	// Both answer through one round-robin transport.
	rr := &RoundRobin{Addrs: []string{a.Listen, b.Listen}}
	lb := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: a.Roots}, DialContext: rr.DialContext, DisableKeepAlives: true,
	}}
	for i := range 4 {
		res, err := lb.Get(a.Base + "/directory")
		if err != nil {
			t.Fatalf("request %d through the balancer: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("request %d through the balancer: %d", i, res.StatusCode)
		}
	}
	if d := rr.Dials(); d[a.Listen] != 2 || d[b.Listen] != 2 {
		t.Errorf("balancer connections %v, want 2 each", d)
	}

	// Kill ends a replica at once; Err then reports the signal.
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Exited():
	default:
		t.Fatal("Exited not closed after Kill")
	}
	if b.Err() == nil {
		t.Error("Err is nil after SIGKILL")
	}
}

// TestFreeAddrs: the addresses are distinct, and free once returned.
func TestFreeAddrs(t *testing.T) {
	addrs, err := FreeAddrs(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Errorf("%s returned twice in %v", a, addrs)
		}
		seen[a] = true
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("listening on %s: %v", a, err)
			continue
		}
		ln.Close()
	}
}
