// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestTenantCacheAcrossReplicas: two replicas on one store (SQLite, and
// PostgreSQL when configured). A
// tenant update through replica A applies at once to A's new-orders and
// to every finalize (B's too, which reads the tenant from the store and
// refreshes B's copy), and to B's new-orders once its cached copy is
// older than the cache's TTL (2 s, docs/operations.md).
func TestTenantCacheAcrossReplicas(t *testing.T) {
	forEachStore(t, testTenantCacheAcrossReplicas)
}

func testTenantCacheAcrossReplicas(t *testing.T, open func(*testing.T) acme.Store) {
	ctx := t.Context()
	st := open(t)
	clock := newFakeClock()
	a := newService(t, acme.Config{Owner: "a"}, acme.Deps{Store: st, Validator: &recorder{}, Now: clock.now})
	b := newService(t, acme.Config{Owner: "b"}, acme.Deps{Store: st, Validator: &recorder{}, Now: clock.now})
	tn := acme.Tenant{Name: "team-a", AllowedNames: []string{".a.example"}, DelegatedZones: []string{".auto.a.example"}}
	if _, err := a.CreateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	key := &acme.EABKey{ID: "kid-1", Label: "team-a", Tenant: "team-a", HMACKey: []byte("k"), CreatedAt: clock.now()}
	if err := st.(acme.EABStore).CreateEABKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb-tenant", Status: acme.StatusValid, CreatedAt: clock.now(), EABKeyID: key.ID}
	if err := st.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	c := acme.Caller{Account: acct}
	order := func(svc *acme.Service, name string) (*acme.Order, error) {
		return svc.NewOrder(ctx, c, acme.NewOrderRequest{Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: name}}})
	}

	// B caches the tenant; its delegated order is ready at once.
	ready, err := order(b, "w.auto.a.example")
	if err != nil || ready.Status != acme.StatusReady {
		t.Fatalf("B's delegated order: %+v, %v; want ready", ready, err)
	}
	tn.DelegatedZones = nil
	if _, err := a.UpdateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	// A's own new-order sees its update at once; B's uses its cached
	// copy, within the TTL.
	if o, err := order(a, "v.auto.a.example"); err != nil || o.Status != acme.StatusPending {
		t.Errorf("A's order after its update: %+v, %v; want pending (no delegation)", o, err)
	}
	if o, err := order(b, "u.auto.a.example"); err != nil || o.Status != acme.StatusReady {
		t.Errorf("B's order within the TTL: %+v, %v; want ready (the cached tenant)", o, err)
	}
	// B's finalize reads the tenant from the store: refused at once.
	certKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{"w.auto.a.example"}}, certKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Finalize(ctx, c, ready.ID, csr)
	var p *acme.Problem
	if !errors.As(err, &p) || p.Type != acme.ProbRejectedIdentifier || !strings.Contains(p.Detail, `no longer delegates "w.auto.a.example"`) {
		t.Fatalf("B's finalize after A removed the delegation: %v; want rejectedIdentifier, no longer delegates", err)
	}
	// That read refreshed B's copy.
	if o, err := order(b, "u2.auto.a.example"); err != nil || o.Status != acme.StatusPending {
		t.Errorf("B's order after its finalize read the tenant: %+v, %v; want pending", o, err)
	}

	// The delegation back through A: B's new-orders see it once their
	// copy is older than the TTL.
	tn.DelegatedZones = []string{".auto.a.example"}
	if _, err := a.UpdateTenant(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if o, err := order(b, "s.auto.a.example"); err != nil || o.Status != acme.StatusPending {
		t.Errorf("B's order within the TTL: %+v, %v; want pending (the cached tenant)", o, err)
	}
	clock.advance(2 * time.Second)
	if o, err := order(b, "s2.auto.a.example"); err != nil || o.Status != acme.StatusReady {
		t.Errorf("B's order past the TTL: %+v, %v; want ready (the store's tenant)", o, err)
	}
}
