// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/x509"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// TestARI: the directory's renewalInfo, windows for a known certificate
// (placed in the configured part of its lifetime), 404 for an unknown one,
// replaces accepted once then 409 alreadyReplaced, renewals passing while
// order-creation is empty, and the checks on what may be replaced.
func TestARI(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 1, SANBudgetPerAccountPerHour: 100}
		c.RateLimiting.DuplicateCertificate.Enabled = true
	})
	ctx, key, c, acct := e.Registered(t)
	kid := acct.URI

	var dir map[string]any
	if err := json.Unmarshal(e.Get(t, e.Base+"/directory").Body, &dir); err != nil || dir["renewalInfo"] != e.Base+"/acme/renewal-info" {
		t.Fatalf("directory renewalInfo = %v (%v)", dir["renewalInfo"], err)
	}

	// Issuing spends the only order-creation token.
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("ari.weir.test", "ari2.weir.test")...)
	leaf := e.VerifyChain(chain, "ari.weir.test", "ari2.weir.test")
	certID := acme.CertID(leaf)

	res, start, end := e.RenewalInfo(t, certID)
	if res.Status != http.StatusOK {
		t.Fatalf("renewal-info: %d %s", res.Status, res.Body)
	}
	life := leaf.NotAfter.Sub(leaf.NotBefore)
	lo := leaf.NotBefore.Add(time.Duration(0.6 * float64(life))).Add(-time.Hour)
	hi := leaf.NotBefore.Add(time.Duration(0.8 * float64(life)))
	if start.Before(lo) || end.After(hi) || !end.After(start) {
		t.Errorf("window [%s, %s] is not within [%s, %s] of the lifetime", start, end, lo, hi)
	}
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 60 || ra > 6*3600 {
		t.Errorf("Retry-After = %q, want 60..21600 seconds", res.Header.Get("Retry-After"))
	}
	// Unknown and malformed identifiers.
	unknown := certID[:strings.Index(certID, ".")] + ".AQIDBA"
	if res, _, _ := e.RenewalInfo(t, unknown); res.Status != http.StatusNotFound {
		t.Errorf("renewal-info of an unknown serial: %d, want 404", res.Status)
	}
	for _, bad := range []string{"nodot", "a.b.c", "AAAA.AH8", "!!!.AQ"} {
		if res, _, _ := e.RenewalInfo(t, bad); res.Status != http.StatusBadRequest {
			t.Errorf("renewal-info %q: %d, want 400", bad, res.Status)
		}
	}

	// order-creation is empty: a plain order is refused...
	acmeenv.Want429(t, e.RawOrder(key, kid, "ari.weir.test", "ari2.weir.test"), "order-creation", acct.URI[strings.LastIndex(acct.URI, "/")+1:])
	// ...but the renewal that replaces the certificate passes, and issues.
	res = e.RawOrderReplaces(key, kid, certID, "ari.weir.test", "ari2.weir.test")
	acmeenv.WantStatus(t, res, http.StatusCreated)
	var o struct {
		Status, Finalize, Replaces string
	}
	if err := json.Unmarshal(res.Body, &o); err != nil || o.Status != "ready" || o.Replaces != certID {
		t.Fatalf("renewal order = %+v (%v), want ready (authorizations reused) replacing %s", o, err, certID)
	}
	renewed, _, err := c.CreateOrderCert(ctx, o.Finalize, acmeenv.CSRFor(t, acmeenv.NewKey(t), "ari.weir.test", "ari2.weir.test"), true)
	if err != nil {
		t.Fatalf("finalize the renewal: %v", err)
	}
	e.VerifyChain(renewed, "ari.weir.test", "ari2.weir.test")

	// A second renewal of the same certificate: 409 alreadyReplaced.
	res = e.RawOrderReplaces(key, kid, certID, "ari.weir.test")
	if typ, _ := res.Problem(); res.Status != http.StatusConflict || typ != string(acme.ProbAlreadyReplaced) {
		t.Errorf("second replaces: %d %s, want 409 alreadyReplaced", res.Status, typ)
	}

	// What may not be replaced.
	other := acmeenv.NewKey(t)
	_, otherKid := e.RawAccount(other)
	newLeaf, err := x509.ParseCertificate(renewed[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		res  acmeenv.Response
	}{
		{"another account's certificate", e.RawOrderReplaces(other, otherKid, acme.CertID(newLeaf), "ari.weir.test")},
		{"no shared identifier", e.RawOrderReplaces(key, kid, acme.CertID(newLeaf), "elsewhere.weir.test")},
		{"unknown certificate", e.RawOrderReplaces(key, kid, unknown, "ari.weir.test")},
		{"not a certID", e.RawOrderReplaces(key, kid, "garbage", "ari.weir.test")},
	} {
		if typ, _ := tc.res.Problem(); tc.res.Status != http.StatusBadRequest || typ != string(acme.ProbMalformed) {
			t.Errorf("%s: %d %s, want 400 malformed: %s", tc.name, tc.res.Status, typ, tc.res.Body)
		}
	}

	// A revoked certificate's window is in the past: renew now.
	if err := c.RevokeCert(ctx, nil, renewed[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatal(err)
	}
	_, start, end = e.RenewalInfo(t, acme.CertID(newLeaf))
	if now := time.Now(); !end.Before(now) || !start.Before(end) {
		t.Errorf("revoked certificate's window [%s, %s] is not in the past", start, end)
	}
}

// TestIncidentMode: renew-now moves an account's windows into the past and
// its renewals pass with the SAN budget spent; revoke --all-from-account
// revokes every active certificate, whose windows are then in the past.
func TestIncidentMode(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.ACME.MaxIdentifiers = 3
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 100, OrderBurst: 100, SANBudgetPerAccountPerHour: 3}
	})
	ctx, key, c, acct := e.Registered(t)
	id := acct.URI[strings.LastIndex(acct.URI, "/")+1:]
	var leaves []*x509.Certificate
	for _, n := range []string{"i1.weir.test", "i2.weir.test", "i3.weir.test"} {
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs(n)...)
		leaves = append(leaves, e.VerifyChain(chain, n))
	}
	// The SAN budget (3 an hour) is spent: a plain order is refused.
	acmeenv.Want429(t, e.RawOrder(key, acct.URI, "i1.weir.test"), "san-budget", id)
	for _, l := range leaves {
		if _, _, end := e.RenewalInfo(t, acme.CertID(l)); !end.After(time.Now()) {
			t.Fatalf("window of %s already in the past before the incident", l.DNSNames[0])
		}
	}

	var iv struct {
		Action       string `json:"action"`
		Certificates []struct {
			Serial, State string
			Reason        string `json:"revocation_reason"`
		}
	}
	e.cli.JSON(t, &iv, "certs", "renew-now", "--account", id)
	if iv.Action != "renew-now" || len(iv.Certificates) != 3 {
		t.Fatalf("renew-now = %+v, want 3 certificates", iv)
	}
	var renewed []*x509.Certificate
	for _, l := range leaves {
		res, _, end := e.RenewalInfo(t, acme.CertID(l))
		if res.Status != http.StatusOK || !end.Before(time.Now()) {
			t.Errorf("window of %s ends %s, want the past", l.DNSNames[0], end)
		}
		// The wave passes with the SAN budget spent.
		res = e.RawOrderReplaces(key, acct.URI, acme.CertID(l), l.DNSNames[0])
		acmeenv.WantStatus(t, res, http.StatusCreated)
		var o struct{ Finalize string }
		_ = json.Unmarshal(res.Body, &o)
		chain, _, err := c.CreateOrderCert(ctx, o.Finalize, acmeenv.CSRFor(t, acmeenv.NewKey(t), l.DNSNames[0]), true)
		if err != nil {
			t.Fatalf("finalize the incident renewal of %s: %v", l.DNSNames[0], err)
		}
		renewed = append(renewed, e.VerifyChain(chain, l.DNSNames[0]))
	}
	// Each certificate is replaced once.
	res := e.RawOrderReplaces(key, acct.URI, acme.CertID(leaves[0]), "i1.weir.test")
	if res.Status != http.StatusConflict {
		t.Errorf("second replacement in the incident: %d, want 409", res.Status)
	}

	// Revoke every active certificate of the account: the 3 originals
	// (renew-now revokes nothing) and the 3 renewals.
	e.cli.JSON(t, &iv, "certs", "revoke", "--all-from-account", id, "--reason", "keyCompromise")
	if iv.Action != "revoked" || len(iv.Certificates) != 6 {
		t.Fatalf("revoke --all-from-account = %+v, want the 6 active certificates", iv)
	}
	// It lists them as they are after it: revoked, with the reason.
	for _, c := range iv.Certificates {
		if c.State != "revoked" || c.Reason != "keyCompromise" {
			t.Errorf("revoke --all-from-account lists %s as %q (reason %q), want revoked (keyCompromise)", c.Serial, c.State, c.Reason)
		}
	}
	crl := e.CRLSerials(renewed[0])
	for _, l := range renewed {
		if crl[l.SerialNumber.String()] != 1 {
			t.Errorf("CRL lacks %s with reason keyCompromise: %v", l.DNSNames[0], crl)
		}
		if _, _, end := e.RenewalInfo(t, acme.CertID(l)); !end.Before(time.Now()) {
			t.Errorf("revoked %s: window ends %s, want the past", l.DNSNames[0], end)
		}
	}
	e.cli.Run(t, 2, "certs", "revoke", "--all-from-account", id, "0102")
}

// TestARIShortLifetime: 10-minute certificates get windows of whole
// minutes inside 60–80 % of their lifetime (the plan counts in minutes),
// and a Retry-After of a minute, not the hours a 90-day certificate gets.
func TestARIShortLifetime(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.CA.CertificateLifetime = 10 * time.Minute })
	ctx, _, c, _ := e.Registered(t)
	for i := range 3 {
		name := "short" + strconv.Itoa(i) + ".weir.test"
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs(name)...)
		leaf := e.VerifyChain(chain, name)
		res, start, end := e.RenewalInfo(t, acme.CertID(leaf))
		if res.Status != http.StatusOK {
			t.Fatalf("renewal-info: %d %s", res.Status, res.Body)
		}
		life := leaf.NotAfter.Sub(leaf.NotBefore)
		lo := leaf.NotBefore.Add(time.Duration(0.6 * float64(life))).Truncate(time.Minute)
		hi := leaf.NotBefore.Add(time.Duration(0.8 * float64(life)))
		if life != 10*time.Minute || start.Before(lo) || end.After(hi) || end.Sub(start) < time.Minute || start.Truncate(time.Minute) != start {
			t.Errorf("%s (%s to %s): window [%s, %s], want whole minutes within [%s, %s]", name, leaf.NotBefore, leaf.NotAfter, start, end, lo, hi)
		}
		if ra := res.Header.Get("Retry-After"); ra != "60" {
			t.Errorf("%s: Retry-After = %q, want 60 (a minute, the lifetime being 10 minutes)", name, ra)
		}
	}
}
