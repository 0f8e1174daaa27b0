// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web"
)

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
	rs := systest.StartRedis(t)
	onRedis := func(c *server.Config) {
		c.RateLimiting.Backend = "redis"
		c.RateLimiting.Redis.Addrs = []string{rs.Addr()}
	}
	a, b := startEnv(t, onRedis), startEnv(t, onRedis)
	for _, e := range []*env{a, b} {
		if w := noncesWarning(t, e); !strings.Contains(w, "nonces are on Redis") {
			t.Fatalf("/readyz warns %q about the nonces, want that they are on Redis (auto with the limiter on Redis)", w)
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

	rs.Stop()
	start := time.Now()
	for _, e := range []*env{a, b} {
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
	rs.Start()
	for _, e := range []*env{a, b} {
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
		e    *env
		c    *xacme.Client
		name string
	}{{a, c, "after-a.weir.test"}, {b, bc, "after-b.weir.test"}} {
		chain, _ := tc.e.Issue(ctx, tc.c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: tc.name})
		tc.e.VerifyChain(chain, tc.name)
	}
}

// noncesWarning is what e's /readyz warns about the nonces: weir warns
// there exactly when it keeps them on Redis (*redis.NonceStore).
func noncesWarning(t *testing.T, e *env) string {
	t.Helper()
	res := e.Get(t, e.Base+"/readyz")
	var rep web.HealthReport
	if err := json.Unmarshal(res.Body, &rep); err != nil {
		t.Fatalf("/readyz: %d %s: %v", res.Status, res.Body, err)
	}
	return rep.Warnings["nonces"]
}
