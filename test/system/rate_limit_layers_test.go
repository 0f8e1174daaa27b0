// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// wantRefusalFields checks the RateLimit fields of a 429: the policy
// names limit with q and w, and RateLimit has r=0 and t the Retry-After
// ra.
func wantRefusalFields(t *testing.T, what string, res acmeenv.Response, limit string, q, w int64, ra int) {
	t.Helper()
	p, l := rateLimitFields(t, what, res)
	if p.name != limit || p.params["q"] != q || p.params["w"] != w || len(p.params) != 2 {
		t.Errorf("%s: RateLimit-Policy %q, want \"%s\";q=%d;w=%d", what, res.Header.Get("RateLimit-Policy"), limit, q, w)
	}
	if l.params["r"] != 0 || l.params["t"] != int64(ra) || len(l.params) != 2 {
		t.Errorf("%s: RateLimit %q, want r=0;t=%d (the Retry-After)", what, res.Header.Get("RateLimit"), ra)
	}
}

func TestRateLimitLayers(t *testing.T) {
	t.Run("global", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 60, Burst: 3}
		})
		for i := range 3 {
			if res := e.Post(e.Base+"/acme/new-nonce", "", nil); res.Status == http.StatusTooManyRequests {
				t.Fatalf("request %d refused within the burst", i+1)
			}
		}
		res := e.Post(e.Base+"/acme/new-nonce", "", nil)
		// One token a second: the wait is at most a second.
		ra := acmeenv.Want429(t, res, "global", "127.0.0.1")
		if ra != 1 {
			t.Errorf("Retry-After = %d, want 1", ra)
		}
		// The refusal carries the RateLimit fields of the global bucket,
		// as the other layers' refusals do theirs: q the burst, w the
		// time it takes to refill (3 × 1 s), nothing left, t the
		// Retry-After.
		wantRefusalFields(t, "global", res, "global", 3, 3, ra)
		// and the extension members of every refusal: the bucket, what
		// is left, the limit as quota per window and count per period.
		var prob struct {
			Limit, Key                   string
			Remaining                    *int64
			Quota, Window, Count, Period int64
			FreesAt                      time.Time
		}
		if err := json.Unmarshal(res.Body, &prob); err != nil || prob.Limit != "global" || prob.Key != "127.0.0.1" ||
			prob.Remaining == nil || *prob.Remaining != 0 || prob.Quota != 3 || prob.Window != 3 ||
			prob.Count != 60 || prob.Period != 60 || prob.FreesAt.IsZero() {
			t.Errorf("global 429 members %+v (%v), want limit global, key 127.0.0.1, remaining 0, quota 3, window 3, count 60, period 60, freesAt:\n%s",
				prob, err, res.Body)
		}
		// A spoofed X-Forwarded-For from an untrusted peer changes nothing.
		req, _ := http.NewRequest(http.MethodHead, e.Base+"/acme/new-nonce", nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		r, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusTooManyRequests {
			t.Errorf("spoofed X-Forwarded-For: status %d, want 429", r.StatusCode)
		}
	})

	t.Run("trusted proxy", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 60, Burst: 1}
			c.Server.TrustedProxies = []string{"127.0.0.1"}
		})
		for _, ip := range []string{"198.51.100.1", "198.51.100.2", "2001:db8:1:2::1"} {
			req, _ := http.NewRequest(http.MethodHead, e.Base+"/acme/new-nonce", nil)
			req.Header.Set("X-Forwarded-For", ip+", 127.0.0.1")
			r, err := e.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusOK {
				t.Errorf("client %s behind a trusted proxy: status %d, want its own bucket", ip, r.StatusCode)
			}
		}
		// The same /64 shares a bucket.
		req, _ := http.NewRequest(http.MethodHead, e.Base+"/acme/new-nonce", nil)
		req.Header.Set("X-Forwarded-For", "2001:db8:1:2::99")
		r, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusTooManyRequests {
			t.Errorf("second address of one IPv6 /64: status %d, want 429", r.StatusCode)
		}
	})

	t.Run("account-creation", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.AccountCreation = ratelimit.AccountCreationConfig{Enabled: true, PerIPPerHour: 5, Burst: 2}
		})
		for range 2 {
			res, _ := e.RawAccount(acmeenv.NewKey(t))
			acmeenv.WantStatus(t, res, http.StatusCreated)
		}
		res, _ := e.RawAccount(acmeenv.NewKey(t))
		// 5 per hour: the next slot is 12 minutes away.
		ra := acmeenv.Want429(t, res, "account-creation", "127.0.0.1")
		if ra < 719 || ra > 720 {
			t.Errorf("Retry-After = %d, want 720", ra)
		}
		// A jwk-signed refusal carries the fields of its bucket too:
		// burst 2, refilled in 2 × 720 s.
		wantRefusalFields(t, "account-creation", res, "account-creation", 2, 1440, ra)
	})

	t.Run("whitelist", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.Whitelist = []string{"127.0.0.0/8"}
			c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 1, Burst: 1}
			c.RateLimiting.AccountCreation = ratelimit.AccountCreationConfig{Enabled: true, PerIPPerHour: 1, Burst: 1}
			c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 1, OrderBurst: 1, SANBudgetPerAccountPerHour: 100}
		})
		var key crypto.Signer
		var kid string
		for range 3 {
			key = acmeenv.NewKey(t)
			var res acmeenv.Response
			res, kid = e.RawAccount(key)
			acmeenv.WantStatus(t, res, http.StatusCreated)
		}
		acmeenv.WantStatus(t, e.RawOrder(key, kid, "w1.weir.test"), http.StatusCreated)
		// The account limits still apply to a whitelisted client.
		acmeenv.Want429(t, e.RawOrder(key, kid, "w2.weir.test"), "order-creation", strings.TrimPrefix(kid, e.Base+"/acme/account/"))
	})

	t.Run("order-creation", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
		})
		key := acmeenv.NewKey(t)
		_, kid := e.RawAccount(key)
		id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
		acmeenv.WantStatus(t, e.RawOrder(key, kid, "o1.weir.test"), http.StatusCreated)
		acmeenv.WantStatus(t, e.RawOrder(key, kid, "o2.weir.test"), http.StatusCreated)
		if ra := acmeenv.Want429(t, e.RawOrder(key, kid, "o3.weir.test"), "order-creation", id); ra < 179 || ra > 180 {
			t.Errorf("Retry-After = %d, want 180 (20 per hour)", ra)
		}
	})

	t.Run("san-budget", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.ACME.MaxIdentifiers = 3
			c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 5, SANBudgetPerAccountPerHour: 4}
		})
		key := acmeenv.NewKey(t)
		_, kid := e.RawAccount(key)
		id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
		acmeenv.WantStatus(t, e.RawOrder(key, kid, "s1.weir.test", "s2.weir.test", "s3.weir.test"), http.StatusCreated)
		acmeenv.Want429(t, e.RawOrder(key, kid, "s4.weir.test", "s5.weir.test"), "san-budget", id)
	})

	t.Run("duplicate-certificate", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.DuplicateCertificate = ratelimit.WindowConfig{Enabled: true, MaxPerWindow: 1, Window: time.Hour}
		})
		ctx := t.Context()
		key := acmeenv.NewKey(t)
		c := e.Client(key)
		acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
		if err != nil {
			t.Fatal(err)
		}
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("dup.weir.test")...)
		ra := acmeenv.Want429(t, e.RawOrder(key, acct.URI, "dup.weir.test"), "duplicate-certificate", "")
		// Retry-After is when the certificate leaves the one-hour window.
		if ra < 3590 || ra > 3600 {
			t.Errorf("Retry-After = %d, want about 3600", ra)
		}
		// Another name set is not a duplicate; revoking frees the slot.
		acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "dup.weir.test", "dup2.weir.test"), http.StatusCreated)
		if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonSuperseded); err != nil {
			t.Fatal(err)
		}
		acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "dup.weir.test"), http.StatusCreated)
	})

	t.Run("failed-validation", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.FailedValidation = ratelimit.WindowConfig{Enabled: true, MaxPerWindow: 1, Window: time.Hour}
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		key := acmeenv.NewKey(t)
		c := e.Client(key)
		acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
		if err != nil {
			t.Fatal(err)
		}
		o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("fail.weir.test"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.GetAuthorization(ctx, o.AuthzURLs[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range a.Challenges {
			if ch.Type == "http-01" { // no response is served: it fails
				if _, err := c.Accept(ctx, ch); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := c.WaitAuthorization(ctx, o.AuthzURLs[0]); err == nil {
			t.Fatal("validation passed; want it to fail")
		}
		acmeenv.Want429(t, e.RawOrder(key, acct.URI, "fail.weir.test"), "failed-validation", "fail.weir.test")
		// The wildcard is counted apart from its base name.
		acmeenv.WantStatus(t, e.RawOrder(key, acct.URI, "*.fail.weir.test"), http.StatusCreated)
	})

	t.Run("pending-authorizations", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.ACME.MaxIdentifiers = 2
			c.RateLimiting.PendingAuthorizations = ratelimit.PendingConfig{Enabled: true, Max: 2}
		})
		key := acmeenv.NewKey(t)
		_, kid := e.RawAccount(key)
		id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
		acmeenv.WantStatus(t, e.RawOrder(key, kid, "p1.weir.test", "p2.weir.test"), http.StatusCreated)
		ra := acmeenv.Want429(t, e.RawOrder(key, kid, "p3.weir.test"), "pending-authorizations", id)
		// Retry-After is when the soonest pending authorization expires.
		if want := int(e.cfg.ACME.PendingAuthzLifetime.Seconds()); ra < want-10 || ra > want {
			t.Errorf("Retry-After = %d, want about %d", ra, want)
		}
	})

	t.Run("registered-domain", func(t *testing.T) {
		e := startEnv(t, func(c *server.Config) {
			c.RateLimiting.RegisteredDomain = ratelimit.WindowConfig{Enabled: true, MaxPerWindow: 1, Window: time.Hour}
		})
		ctx := t.Context()
		c := e.Client(acmeenv.NewKey(t))
		if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
			t.Fatal(err)
		}
		e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("a.rd.example.com")...)
		// Another account, another name, same eTLD+1.
		key := acmeenv.NewKey(t)
		_, kid := e.RawAccount(key)
		acmeenv.Want429(t, e.RawOrder(key, kid, "b.rd.example.com"), "registered-domain", "example.com")
	})
}
