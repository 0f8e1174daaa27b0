// SPDX-License-Identifier: Apache-2.0

package server

import (
	"net/http"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
)

// TestRenewEarly: an issuer marked renew-early by a live reload tells the
// holders of its certificates, through ARI, to renew now, and their
// replacements pass with the account's SAN budget spent, as in an
// incident; without it the window is in the future and the budget holds.
func TestRenewEarly(t *testing.T) {
	e := startEnv(t, func(c *Config) {
		c.ACME.MaxIdentifiers = 1
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 100, OrderBurst: 100, SANBudgetPerAccountPerHour: 1}
	})
	ctx, key, c, acct := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("early.weir.test")...)
	leaf := e.VerifyChain(chain, "early.weir.test")
	if _, _, end := e.RenewalInfo(t, acme.CertID(leaf)); !end.After(time.Now()) {
		t.Fatalf("the window ends %s before renew-early, want the future", end)
	}
	// The SAN budget (1 an hour) is spent: a replacement is refused.
	if res := e.RawOrderReplaces(key, acct.URI, acme.CertID(leaf), "early.weir.test"); res.Status != http.StatusTooManyRequests {
		t.Fatalf("a replacement before renew-early: %d %s, want 429", res.Status, res.Body)
	}

	cfg := e.cfg
	cfg.CA.Intermediate.RenewEarly = true
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatal(err)
	}
	if e.srv.reloaded.restart != nil {
		t.Errorf("renew-early asked for a restart of %v; it reloads live", e.srv.reloaded.restart)
	}
	res, _, end := e.RenewalInfo(t, acme.CertID(leaf))
	if res.Status != http.StatusOK || !end.Before(time.Now()) {
		t.Errorf("after renew-early the window ends %s, want the past", end)
	}
	res = e.RawOrderReplaces(key, acct.URI, acme.CertID(leaf), "early.weir.test")
	acmeenv.WantStatus(t, res, http.StatusCreated)
}
