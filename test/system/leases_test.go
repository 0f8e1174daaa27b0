// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// heldResponder answers http-01 challenges, but holds every request until
// its gate opens, telling hits about the first ones: a validation caught
// in the middle.
type heldResponder struct {
	mu      sync.Mutex
	answers map[string]string // token -> key authorization
	hits    chan string
	gate    chan struct{}
}

func (h *heldResponder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.URL.Path, "/.well-known/acme-challenge/")
	h.mu.Lock()
	ka, ok := h.answers[token]
	h.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	select {
	case h.hits <- token:
	default:
	}
	select {
	case <-h.gate:
		io.WriteString(w, ka)
	case <-r.Context().Done(): // the validating process died
	}
}

// freeAddrs returns n distinct loopback addresses with ports free a moment
// ago. The listeners stay open until all n are picked: closed one by one,
// the kernel may hand the same port out again (seen as two of weir's
// listeners on one address).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs[i] = ln.Addr().String()
	}
	return addrs
}

// leaseOwner reads who holds the lease of challenge id, "" if nobody.
func leaseOwner(t *testing.T, dsn, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var owner *string
	if err := pgtest.Scan(ctx, dsn, `SELECT lease_owner FROM challenges WHERE id = $1`, []any{id}, &owner); err != nil {
		t.Fatalf("reading the lease of challenge %s: %v", id, err)
	}
	if owner == nil {
		return ""
	}
	return *owner
}

// TestValidationSurvivesKill: two weir processes on one PostgreSQL
// schema. A accepts a challenge, which it claims, and is killed (SIGKILL)
// in the middle of validating it. B takes the job over once A's lease has
// ended, and the authorization is valid within the lease and 10 s of the
// POST; the order is then finalized on B.
func TestValidationSurvivesKill(t *testing.T) {
	dsn := postgresSchema(t)
	resp := &heldResponder{answers: map[string]string{}, hits: make(chan string, 4), gate: make(chan struct{})}
	httpLn := acmeenv.ListenLoopback(t)
	hs := &http.Server{Handler: resp}
	go hs.Serve(httpLn)
	t.Cleanup(func() { hs.Close() })
	b := startEnv(t, func(c *server.Config) {
		c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 8}
		c.Challenges.HTTP01.Port = acmeenv.Port(httpLn)
	})

	// A: the same CA (data directory), store, URL and challenge
	// settings, listening elsewhere, in a process of its own.
	aCfg := b.cfg
	addrs := freeAddrs(t, 3)
	aCfg.Server.Listen, aCfg.Admin.Listen, aCfg.Server.HTTP.Listen = addrs[0], addrs[1], addrs[2]
	aCfg.Server.ExternalURL, aCfg.Server.HTTP.ExternalURL = b.Base, b.artefacts
	aCfg.Log.Level = "info"
	yml, err := yaml.Marshal(aCfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgFile, logFile := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "a.log")
	if err := os.WriteFile(cfgFile, yml, 0o600); err != nil {
		t.Fatal(err)
	}
	logw, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer logw.Close()
	a := exec.Command(builder.Binary(t), "serve", "-config", cfgFile)
	a.Stdout, a.Stderr = logw, logw
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			a.Process.Kill()
			a.Wait()
		}
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("the log of A:\n%s", log)
		}
	})

	// The client reaches whichever replica target names.
	var target atomic.Value
	target.Store(b.cfg.Server.Listen)
	lb := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: b.Roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, target.Load().(string))
		},
		DisableKeepAlives: true,
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	deadline := time.Now().Add(30 * time.Second)
	target.Store(aCfg.Server.Listen)
	for {
		res, err := lb.Get(b.Base + "/directory")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("A did not serve its directory within 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	target.Store(b.cfg.Server.Listen)

	c := &xacme.Client{Key: acmeenv.NewKey(t), DirectoryURL: b.Base + "/directory", HTTPClient: lb, UserAgent: "weir-leases"}
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("kill.weir.test"))
	if err != nil {
		t.Fatal(err)
	}
	authz, err := c.GetAuthorization(ctx, o.AuthzURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	var ch *xacme.Challenge
	for _, x := range authz.Challenges {
		if x.Type == "http-01" {
			ch = x
		}
	}
	if ch == nil {
		t.Fatal("no http-01 challenge")
	}
	ka, err := c.HTTP01ChallengeResponse(ch.Token)
	if err != nil {
		t.Fatal(err)
	}
	resp.mu.Lock()
	resp.answers[ch.Token] = ka
	resp.mu.Unlock()

	// The POST goes to A, which claims the job and starts validating.
	target.Store(aCfg.Server.Listen)
	posted := time.Now()
	if _, err := c.Accept(ctx, ch); err != nil {
		t.Fatalf("accept on A: %v", err)
	}
	target.Store(b.cfg.Server.Listen)
	select {
	case <-resp.hits:
	case <-time.After(20 * time.Second):
		t.Fatal("A did not start validating within 20 s")
	}
	id := path.Base(ch.URI)
	bOwner := b.srv.Service().Config().Owner
	if owner := leaseOwner(t, dsn, id); owner == "" || owner == bOwner {
		t.Fatalf("the job's lease is held by %q while A validates, want A's (B is %q)", owner, bOwner)
	}

	// A dies mid-validation; the challenge now passes for whoever asks.
	killed = true
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.Wait()
	close(resp.gate)

	lease := b.srv.Service().Config().ValidationLease
	wctx, wcancel := context.WithDeadline(ctx, posted.Add(lease+10*time.Second))
	defer wcancel()
	if _, err := c.WaitAuthorization(wctx, authz.URI); err != nil {
		t.Fatalf("the authorization was not valid within the lease (%s) and 10 s of the POST: %v", lease, err)
	}
	t.Logf("valid %s after the POST to A (lease %s)", time.Since(posted).Round(time.Millisecond), lease)
	// A is dead, so B validated it; the settled challenge is nobody's job.
	if owner := leaseOwner(t, dsn, id); owner != "" {
		t.Errorf("the job's lease is held by %q once the challenge is valid, want it free", owner)
	}
	if o, err = c.WaitOrder(ctx, o.URI); err != nil || o.Status != xacme.StatusReady {
		t.Fatalf("order after the takeover: %v, %v; want ready", o, err)
	}
	certKey := acmeenv.NewKey(t)
	chain, _, err := c.CreateOrderCert(ctx, o.FinalizeURL, acmeenv.CSRFor(t, certKey, "kill.weir.test"), true)
	if err != nil {
		t.Fatalf("finalize on B: %v", err)
	}
	b.VerifyChain(chain, "kill.weir.test")
}
