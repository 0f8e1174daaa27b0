// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
)

// writeConfig writes cfg as the server's config file.
func (e *testEnv) writeConfig(cfg Config) {
	e.t.Helper()
	b, err := yaml.Marshal(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.writeConfigBytes(b)
}

// writeConfigBytes replaces the server's config file, atomically (as
// editors that save by rename do), so the poll never sees half of it.
func (e *testEnv) writeConfigBytes(b []byte) {
	e.t.Helper()
	if err := writeFileAtomic(e.srv.configPath, b, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// TestReload: a valid edit changes the limits live and keeps what was
// spent; an invalid edit is refused and the old configuration keeps
// working; what cannot change live is reported as needing a restart.
func TestReload(t *testing.T) {
	e := startEnv(t, nil)
	key := acmeenv.NewKey(t)
	_, kid := e.RawAccount(key)
	id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "before.weir.test"), http.StatusCreated)

	cfg := e.cfg
	cfg.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
	cfg.CA.Policy.DeniedDomains = []string{"blocked.test"}
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "one.weir.test"), http.StatusCreated)
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "two.weir.test"), http.StatusCreated)
	acmeenv.Want429(t, e.RawOrder(key, kid, "three.weir.test"), "order-creation", id)
	if typ, _ := e.RawOrder(key, kid, "x.blocked.test").Problem(); typ != "urn:ietf:params:acme:error:rejectedIdentifier" {
		t.Errorf("the reloaded policy was not applied: %s", typ)
	}

	// An invalid edit: refused, and the running limits stay.
	bad := cfg
	bad.RateLimiting.OrderCreation.OrderBurst = 0
	e.writeConfig(bad)
	err := e.srv.reload("test")
	if err == nil || !strings.Contains(err.Error(), "rate-limiting.order-creation.order-burst") {
		t.Fatalf("reload of an invalid file: err = %v, want one naming the key", err)
	}
	acmeenv.Want429(t, e.RawOrder(key, kid, "four.weir.test"), "order-creation", id)
	if err := os.WriteFile(e.srv.configPath, []byte("rate-limiting: [not, a, map"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.reload("test"); err == nil {
		t.Fatal("reload of broken YAML succeeded")
	}
	if res, err := e.HTTP.Get(e.Base + "/directory"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("server after refused reloads: %v %v", res, err)
	}

	// Raising the burst keeps what was spent: 2 of the 4 are used (the
	// first order was made while the limit was off).
	more := cfg
	more.RateLimiting.OrderCreation.OrderBurst = 4
	more.Server.Listen = "127.0.0.1:1"
	more.Admin.Listen = "127.0.0.1:2"
	e.writeConfig(more)
	if err := e.srv.reload("test"); err != nil {
		t.Fatalf("reload: %v", err)
	}
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "five.weir.test"), http.StatusCreated)
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "six.weir.test"), http.StatusCreated)
	acmeenv.Want429(t, e.RawOrder(key, kid, "seven.weir.test"), "order-creation", id)
	if r := e.srv.reloaded.restart; !slices.Contains(r, "server.listen") || !slices.Contains(r, "admin") {
		t.Errorf("needs restart = %v, want server.listen and admin", r)
	}
}

// TestReloadTriggers: SIGHUP and a change of the file each reload it.
func TestReloadTriggers(t *testing.T) {
	// Catch SIGHUP here too, so the test process survives it whenever it
	// arrives. The server's own watcher runs since startEnv.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	e := startEnv(t, nil)
	cfg := e.cfg

	reloadedAfter := func(since time.Time) bool {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			e.srv.reloaded.mu.Lock()
			at := e.srv.reloaded.at
			e.srv.reloaded.mu.Unlock()
			if at.After(since) {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		return false
	}

	// A changed file (the poll sees a new modification time).
	start := time.Now()
	cfg.CA.Policy.DeniedDomains = []string{"file.test"}
	time.Sleep(10 * time.Millisecond)
	e.writeConfig(cfg)
	if err := os.Chtimes(e.srv.configPath, time.Now(), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !reloadedAfter(start) {
		t.Fatal("a changed config file was not reloaded within 10 s")
	}
	// SIGHUP, once the watcher has had time to subscribe.
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !reloadedAfter(start) {
		t.Fatal("SIGHUP did not reload the config within 10 s")
	}
}

// logSink is a log writer safe for concurrent use, for asserting on what
// the server logs.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the logged lines that contain every one of subs.
func (l *logSink) lines(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// waitLog waits up to limit for a line containing every one of subs and
// returns it and how long it took to appear.
func (l *logSink) waitLog(t *testing.T, limit time.Duration, subs ...string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if ls := l.lines(subs...); len(ls) > 0 {
			return ls[0], time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", time.Since(start)
}

// startLoggedEnv is startEnv's server without the challenge responders,
// logging at info level to the returned sink instead of nowhere: the
// reload tests assert on what the server logs. Every limit starts off,
// and the admin listener is off.
func startLoggedEnv(t *testing.T, mutate func(*Config)) (*testEnv, *logSink) {
	t.Helper()
	ln := acmeenv.ListenLoopback(t)
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Server.Listen = ln.Addr().String()
	cfg.Server.HTTP.Listen = "" // not served here
	cfg.Log.Level = "info"
	off := false
	cfg.Admin.Enabled = &off
	rl := &cfg.RateLimiting
	rl.Global.Enabled, rl.AccountCreation.Enabled, rl.OrderCreation.Enabled = false, false, false
	rl.DuplicateCertificate.Enabled, rl.FailedValidation.Enabled = false, false
	rl.PendingAuthorizations.Enabled, rl.RegisteredDomain.Enabled = false, false
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &logSink{}
	srv, err := New(t.Context(), cfg, Options{ConfigFile: filepath.Join(cfg.DataDir, "weir.yaml"), Log: logs})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, cfg: cfg, srv: srv, Env: acmeenv.New(t)}
	e.Base = srv.baseURL
	e.writeConfig(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, Listeners{ACME: ln}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	e.Roots = x509.NewCertPool()
	if !e.Roots.AppendCertsFromPEM(srv.root) {
		t.Fatal("no root PEM")
	}
	e.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.Roots}, MaxIdleConnsPerHost: 64,
	}}
	t.Cleanup(e.HTTP.CloseIdleConnections)
	return e, logs
}

// loadResult is one request of a load run.
type loadResult struct {
	start, end time.Time
	status     int
	problem    string // the problem type of a GET answered with an error
	err        error
}

// runLoad sends new-nonce HEADs and directory GETs from workers
// goroutines, each pausing 5 ms between requests, until stop is closed
// (or 30 s, or 10,000 requests each, have passed), and returns every
// outcome.
func runLoad(e *testEnv, workers int, stop <-chan struct{}) func() []loadResult {
	var mu sync.Mutex
	var results []loadResult
	var wg sync.WaitGroup
	deadline := time.Now().Add(30 * time.Second)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				method, url := http.MethodHead, e.Base+"/acme/new-nonce"
				if (w+i)%2 == 1 {
					method, url = http.MethodGet, e.Base+"/directory"
				}
				req, _ := http.NewRequest(method, url, nil)
				r := loadResult{start: time.Now()}
				res, err := e.HTTP.Do(req)
				if err != nil {
					r.err = err
				} else {
					body, rerr := io.ReadAll(res.Body)
					res.Body.Close()
					r.status, r.err = res.StatusCode, rerr
					if method == http.MethodGet && res.StatusCode != http.StatusOK {
						var p struct{ Type string }
						_ = json.Unmarshal(body, &p)
						r.problem = p.Type
					}
				}
				r.end = time.Now()
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	return func() []loadResult {
		wg.Wait()
		return results
	}
}

// TestReloadUnderLoad: while requests flow, editing the config file (no
// SIGHUP: the poll finds it) changes the global limit, then the whitelist,
// each within 2 s, with no restart and no request failing other than with
// the expected 429.
func TestReloadUnderLoad(t *testing.T) {
	e, logs := startLoggedEnv(t, func(c *Config) {
		c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 1_000_000, Burst: 10_000}
	})
	stop := make(chan struct{})
	wait := runLoad(e, 4, stop)
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wait()
		}
	}()

	time.Sleep(time.Second)
	tight := e.cfg
	tight.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 60, Burst: 5}
	tightenedAt := time.Now()
	e.writeConfig(tight)
	time.Sleep(3 * time.Second)

	white := tight
	white.RateLimiting.Whitelist = []string{"127.0.0.1"}
	whitelistedAt := time.Now()
	e.writeConfig(white)
	time.Sleep(3 * time.Second)
	close(stop)
	stopped = true
	results := wait()

	const within = 2 * time.Second
	var first429 time.Time                  // the first 429 after the tightening
	var okLate, deniedLate, deniedWhite int // after the tightening took hold; after the whitelist did
	var n200, n429 int
	for _, r := range results {
		if r.err != nil {
			t.Errorf("request at %s failed: %v", r.start.Format(time.StampMilli), r.err)
			continue
		}
		switch r.status {
		case http.StatusOK:
			n200++
		case http.StatusTooManyRequests:
			n429++
			if r.problem != "" && r.problem != "urn:ietf:params:acme:error:rateLimited" {
				t.Errorf("429 with problem %q", r.problem)
			}
		default:
			t.Errorf("request at %s: status %d (%s), want 200 or 429", r.start.Format(time.StampMilli), r.status, r.problem)
			continue
		}
		denied := r.status == http.StatusTooManyRequests
		switch {
		case r.end.Before(tightenedAt):
			if denied {
				t.Errorf("429 at %s, before the limit was tightened", r.end.Format(time.StampMilli))
			}
		case r.start.Before(whitelistedAt):
			if denied && (first429.IsZero() || r.end.Before(first429)) {
				first429 = r.end
			}
			if r.start.After(tightenedAt.Add(within)) {
				if denied {
					deniedLate++
				} else {
					okLate++
				}
			}
		case r.start.After(whitelistedAt.Add(within)):
			if denied {
				deniedWhite++
			}
		}
	}
	t.Logf("%d requests: %d × 200, %d × 429; the tightened limit showed after %v", len(results), n200, n429, first429.Sub(tightenedAt).Round(time.Millisecond))
	if first429.IsZero() || first429.Sub(tightenedAt) > within {
		t.Errorf("the tightened global limit showed after %v, want within %v", first429.Sub(tightenedAt), within)
	}
	// 60/min: at most about one request a second gets through once the
	// burst is spent.
	if deniedLate == 0 || okLate > 3 {
		t.Errorf("after the tightening took hold: %d allowed, %d refused; want nearly all refused", okLate, deniedLate)
	}
	if deniedWhite > 0 {
		t.Errorf("%d requests refused more than %v after 127.0.0.1 was whitelisted", deniedWhite, within)
	}
	if got := len(logs.lines("configuration reloaded", "file change")); got != 2 {
		t.Errorf("%d file-change reloads logged, want 2:\n%s", got, strings.Join(logs.lines("configuration"), "\n"))
	}
	if ls := logs.lines("level=ERROR"); len(ls) > 0 {
		t.Errorf("errors logged:\n%s", strings.Join(ls, "\n"))
	}
}

// TestReloadRefusesBrokenEdit: an edit that does not parse or validate is
// refused within 2 s, logged with the key at fault, and the running
// configuration keeps serving with its old limits; the next good edit is
// taken.
func TestReloadRefusesBrokenEdit(t *testing.T) {
	// Each broken file also asks for a larger order burst, which must not
	// take effect.
	raised := func(c Config) Config {
		c.RateLimiting.OrderCreation.OrderBurst = 10
		return c
	}
	tests := []struct {
		name    string
		edit    func(c Config) []byte
		wantLog []string
	}{
		{"bad YAML", func(Config) []byte { return []byte("rate-limiting: [not, a, map\n") }, []string{`:1: did not find expected ',' or ']'`}},
		{"unknown key", func(c Config) []byte {
			b, _ := yaml.Marshal(raised(c))
			return bytes.Replace(b, []byte("order-burst:"), []byte("order-brust:"), 1)
		}, []string{"rate-limiting.order-creation.order-brust: unknown key; did you mean order-burst?"}},
		{"zero limit", func(c Config) []byte {
			c = raised(c)
			c.RateLimiting.OrderCreation.OrdersPerAccountPerHour = 0
			b, _ := yaml.Marshal(c)
			return b
		}, []string{"rate-limiting.order-creation.orders-per-account-per-hour: must be at least 1"}},
		{"admin on every interface without token or TLS", func(c Config) []byte {
			c = raised(c)
			on := true
			c.Admin = AdminConfig{Enabled: &on, Listen: "0.0.0.0:14001", TokenFile: "admin-token", Auth: "none"}
			b, _ := yaml.Marshal(c)
			return b
		}, []string{"admin.auth:", "admin.tls:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, logs := startLoggedEnv(t, func(c *Config) {
				c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
			})
			key := acmeenv.NewKey(t)
			_, kid := e.RawAccount(key)
			id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
			acmeenv.WantStatus(t, e.RawOrder(key, kid, "a.weir.test"), http.StatusCreated)

			e.writeConfigBytes(tt.edit(e.cfg))
			line, took := logs.waitLog(t, 5*time.Second, "configuration reload refused", "file change")
			if line == "" {
				t.Fatalf("no refusal logged within 5 s; log:\n%s", strings.Join(logs.lines(""), "\n"))
			}
			if took > 2*time.Second {
				t.Errorf("the refusal came after %v, want within 2 s", took)
			}
			t.Logf("refused after %v: %s", took.Round(time.Millisecond), line)
			for _, w := range tt.wantLog {
				if !strings.Contains(line, w) {
					t.Errorf("refusal log line does not name %q:\n%s", w, line)
				}
			}
			e.srv.reloaded.mu.Lock()
			rerr := e.srv.reloaded.err
			e.srv.reloaded.mu.Unlock()
			if rerr == nil {
				t.Error("reloaded.err is nil after a refused reload")
			}
			// The old limits stay: burst 2, not the 10 the broken file asked for.
			acmeenv.WantStatus(t, e.RawOrder(key, kid, "b.weir.test"), http.StatusCreated)
			acmeenv.Want429(t, e.RawOrder(key, kid, "c.weir.test"), "order-creation", id)
			if res := e.Get(t, e.Base+"/directory"); res.Status != http.StatusOK {
				t.Errorf("directory after the refused reload: %d", res.Status)
			}

			// A good edit afterwards is taken: burst 4 leaves two more.
			good := e.cfg
			good.RateLimiting.OrderCreation.OrderBurst = 4
			e.writeConfig(good)
			if line, _ := logs.waitLog(t, 5*time.Second, "configuration reloaded", "file change"); line == "" {
				t.Fatal("the good edit after a refused one was not reloaded within 5 s")
			}
			acmeenv.WantStatus(t, e.RawOrder(key, kid, "d.weir.test"), http.StatusCreated)
		})
	}
}
