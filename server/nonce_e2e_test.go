// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/ecdsa"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/storage/redis"
)

func TestNonceBackendConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		want    string // the resolved backend
		wantErr string
	}{
		{name: "default", mutate: func(*Config) {}, want: nonceMemory},
		{name: "auto with the limiter on redis", mutate: func(c *Config) { c.RateLimiting.Backend = "redis" }, want: nonceRedis},
		{name: "auto with the store on postgres", mutate: func(c *Config) { c.Storage.Driver = "postgres" }, want: noncePostgres},
		{name: "auto prefers the postgres store, which outlives a Redis outage", mutate: func(c *Config) { c.RateLimiting.Backend, c.Storage.Driver = "redis", "postgres" }, want: noncePostgres},
		{name: "explicit memory with redis", mutate: func(c *Config) { c.RateLimiting.Backend, c.ACME.Nonces.Backend = "redis", "memory" }, want: nonceMemory},
		{name: "explicit redis with the limiter on sqlite", mutate: func(c *Config) { c.ACME.Nonces.Backend = "redis" }, want: nonceRedis},
		{name: "explicit redis without an address", mutate: func(c *Config) { c.ACME.Nonces.Backend, c.RateLimiting.Redis.Addrs = "redis", nil },
			wantErr: "acme.nonces.backend: redis keeps nonces on the Redis of rate-limiting.redis"},
		{name: "explicit postgres on sqlite", mutate: func(c *Config) { c.ACME.Nonces.Backend = "postgres" },
			wantErr: "acme.nonces.backend: postgres keeps nonces in the PostgreSQL store, so it needs storage.driver: postgres"},
		{name: "unknown", mutate: func(c *Config) { c.ACME.Nonces.Backend = "etcd" },
			wantErr: `acme.nonces.backend: "etcd" must be auto, memory, redis or postgres`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mutate(&c)
			errs := c.validateNonces()
			if tc.wantErr != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr) {
					t.Fatalf("validateNonces() = %v, want %q", errs, tc.wantErr)
				}
				if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Validate() = %v, want it to report %q", err, tc.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("validateNonces() = %v", errs)
			}
			if got := c.nonceBackend(); got != tc.want {
				t.Errorf("nonceBackend() = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ParseConfig("", []byte("acme:\n  nonces: { backend: redis }\n")); err != nil {
		t.Errorf("acme.nonces.backend: redis in a file: %v", err)
	}
	if _, err := ParseConfig("", []byte("acme:\n  nonces: { backend: redis, prefix: x }\n")); err == nil {
		t.Error("an unknown key under acme.nonces was accepted")
	}
}

// fakeNonceProvider is a store that keeps nonces itself, as the
// PostgreSQL store does.
type fakeNonceProvider struct{ ns acme.NonceStore }

func (f fakeNonceProvider) NonceStore(time.Duration) acme.NonceStore { return f.ns }

// TestOpenNoncesPostgres: the postgres backend takes the store's own
// nonce store when it offers one; auto falls back to memory when it does
// not, and an explicit postgres refuses to start.
func TestOpenNoncesPostgres(t *testing.T) {
	shared, err := acme.NewMemoryNonces(time.Hour, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, backend string
		store         any
		wantShared    bool
		wantErr       bool
	}{
		{name: "auto, store with nonces", backend: nonceAuto, store: fakeNonceProvider{shared}, wantShared: true},
		{name: "explicit postgres, store with nonces", backend: noncePostgres, store: fakeNonceProvider{shared}, wantShared: true},
		{name: "auto, store without nonces", backend: nonceAuto, store: struct{}{}},
		{name: "explicit postgres, store without nonces", backend: noncePostgres, store: struct{}{}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), backend: &limiterBackend{}}
			s.cfg.Storage.Driver = "postgres"
			s.cfg.ACME.Nonces.Backend = tc.backend
			ns, err := s.openNonces(tc.store)
			switch {
			case tc.wantErr:
				if err == nil {
					t.Fatalf("openNonces() = %T, nil error; want an error", ns)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantShared && ns != shared:
				t.Errorf("openNonces() = %T, want the store's own", ns)
			case !tc.wantShared:
				if _, ok := ns.(*acme.MemoryNonces); !ok || ns == shared {
					t.Errorf("openNonces() = %T, want the memory fallback", ns)
				}
			}
		})
	}
}

// wantRetryable checks a response given while the nonce store is down: a
// 400 badNonce or a 503, with an integer Retry-After, never a 500.
func wantRetryable(t *testing.T, what string, res acmeenv.Response) {
	t.Helper()
	typ, detail := res.Problem()
	switch {
	case res.Status == http.StatusInternalServerError:
		t.Errorf("%s: 500 %s %q", what, typ, detail)
	case res.Status == http.StatusBadRequest && typ == string(acme.ProbBadNonce):
	case res.Status == http.StatusServiceUnavailable:
	default:
		t.Errorf("%s: %d %s %q, want badNonce or 503", what, res.Status, typ, detail)
	}
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds >= 1", what, res.Header.Get("Retry-After"))
	}
}

// TestSharedNoncesRedis runs two weir servers on one Redis of the test's
// own, with acme.nonces.backend auto (the limiter is on Redis too): a
// nonce from one server redeems once on the other. Then Redis stops:
// every request gets badNonce or a 503, with Retry-After, never a 500.
// Redis starts again (empty) and issuance works, without restarting weir.
func TestSharedNoncesRedis(t *testing.T) {
	rs := startRedis(t)
	onRedis := func(c *Config) {
		c.RateLimiting.Backend = "redis"
		c.RateLimiting.Redis.Addrs = []string{rs.addr()}
	}
	a, b := startEnv(t, onRedis), startEnv(t, onRedis)
	for _, e := range []*testEnv{a, b} {
		if _, ok := e.srv.nonces.(*redis.NonceStore); !ok {
			t.Fatalf("nonces are %T, want *redis.NonceStore (auto with the limiter on Redis)", e.srv.nonces)
		}
	}

	// A nonce from A is good once on B: the two replicas share them.
	key := acmeenv.NewKey(t)
	n := a.Nonce()
	res := b.PostJWS(key, b.Base+"/acme/new-account", []byte(`{"termsOfServiceAgreed":true}`), acmeenv.SignOpts{Nonce: n})
	acmeenv.WantStatus(t, res, http.StatusCreated)
	res = a.PostJWS(key, a.Base+"/acme/new-account", []byte(`{"termsOfServiceAgreed":true}`), acmeenv.SignOpts{Nonce: n})
	if typ, detail := res.Problem(); typ != string(acme.ProbBadNonce) || !strings.Contains(detail, "already used") {
		t.Fatalf("the same nonce again, on A: %d %s %q; want badNonce, already used", res.Status, typ, detail)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	acctKey := acmeenv.NewKey(t)
	c := a.Client(acctKey)
	acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	chain, _ := a.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "before.weir.test"})
	a.VerifyChain(chain, "before.weir.test")
	held := a.Nonce() // issued before Redis stops

	rs.stop()
	start := time.Now()
	for _, e := range []*testEnv{a, b} {
		for _, method := range []string{http.MethodHead, http.MethodGet} {
			req, _ := http.NewRequestWithContext(ctx, method, e.Base+"/acme/new-nonce", nil)
			r, err := e.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			got := acmeenv.Response{Status: r.StatusCode, Header: r.Header, Body: body}
			if got.Status != http.StatusServiceUnavailable {
				t.Errorf("%s new-nonce with Redis down: %d, want 503", method, got.Status)
			}
			if got.Header.Get("Replay-Nonce") != "" {
				t.Errorf("%s new-nonce with Redis down carries a Replay-Nonce", method)
			}
			wantRetryable(t, method+" new-nonce", got)
		}
		// The directory needs no nonce: it is served, without one.
		if d := e.Get(t, e.Base+"/directory"); d.Status != http.StatusOK {
			t.Errorf("directory with Redis down: %d", d.Status)
		}
		order := []byte(`{"identifiers":[{"type":"dns","value":"down.weir.test"}]}`)
		for _, req := range []struct {
			what    string
			key     *ecdsa.PrivateKey
			url     string
			payload []byte
			opts    acmeenv.SignOpts
		}{
			{"new-account with a nonce from before", key, e.Base + "/acme/new-account", []byte(`{"onlyReturnExisting":true}`), acmeenv.SignOpts{Nonce: held}},
			{"new-order with a nonce from before", acctKey, e.Base + "/acme/new-order", order, acmeenv.SignOpts{Nonce: held, KID: acct.URI}},
			{"new-order with no nonce to use", acctKey, e.Base + "/acme/new-order", order, acmeenv.SignOpts{Nonce: "-", KID: acct.URI}},
		} {
			if req.opts.KID != "" && e != a {
				continue // the account is A's: each server has its own store here
			}
			got := e.PostJWS(req.key, req.url, req.payload, req.opts)
			wantRetryable(t, req.what, got)
			if typ, detail := got.Problem(); typ == string(acme.ProbBadNonce) && req.opts.Nonce == held && !strings.Contains(detail, "could not be checked") {
				t.Errorf("%s: detail %q, want it to say the nonce could not be checked", req.what, detail)
			}
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the requests with Redis down took %v: each must be decided within a bounded time", d)
	}

	// Redis is back, empty: the nonces from before are gone (badNonce,
	// which x/crypto/acme retries with a fresh one) and issuance works on
	// both replicas without a restart.
	rs.start()
	for _, e := range []*testEnv{a, b} {
		deadline := time.Now().Add(10 * time.Second)
		for e.Nonce() == "" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	bc := b.Client(acctKey)
	if _, err := bc.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		// Each server has its own store in this test: the account is new on B.
		t.Fatalf("register on B after Redis came back: %v", err)
	}
	// c holds nonces from before Redis stopped: its first request is a
	// badNonce that it retries.
	for _, tc := range []struct {
		e    *testEnv
		c    *xacme.Client
		name string
	}{{a, c, "after-a.weir.test"}, {b, bc, "after-b.weir.test"}} {
		chain, _ := tc.e.Issue(ctx, tc.c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: tc.name})
		tc.e.VerifyChain(chain, tc.name)
	}
}

// TestOpenNoncesOwnRedisClient: acme.nonces.backend redis with the limiter
// elsewhere opens a client of the nonces' own from rate-limiting.redis,
// which Close closes; with the limiter on Redis it reuses the limiter's.
func TestOpenNoncesOwnRedisClient(t *testing.T) {
	s := &Server{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), backend: &limiterBackend{}}
	s.cfg.ACME.Nonces.Backend = nonceRedis
	s.cfg.RateLimiting.Redis.Addrs = []string{"127.0.0.1:1"} // never dialled here
	ns, err := s.openNonces(struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ns.(*redis.NonceStore); !ok || s.closeNonces == nil {
		t.Fatalf("openNonces() = %T, own client %v; want *redis.NonceStore with a client to close", ns, s.closeNonces != nil)
	}
	if err := s.closeNonces(); err != nil {
		t.Errorf("closing the nonces' client: %v", err)
	}

	client, err := newRedisClient(s.cfg.RateLimiting.Redis)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s2 := &Server{cfg: s.cfg, log: s.log, backend: &limiterBackend{redis: client}}
	if _, err := s2.openNonces(struct{}{}); err != nil || s2.closeNonces != nil {
		t.Errorf("with the limiter's client: err %v, own client %v; want it reused", err, s2.closeNonces != nil)
	}
}
