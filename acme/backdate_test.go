// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// TestFinalizeBackdates: with a backdate in the live rules, a certificate
// whose order asks for no validity period starts the backdate before its
// signing (the service's and the CA's clock) and lasts its profile's
// lifetime exactly, with its renewal window within that lifetime; an
// order that asks for notAfter (RFC 8555 §7.4) gets it as asked, from
// the signing time; a reload's new backdate applies to the next
// certificate.
func TestFinalizeBackdates(t *testing.T) {
	st := openSQLite(t)
	clock := newFakeClock()
	clock.advance(1500 * time.Millisecond) // mid-second: notBefore is whole seconds
	h, err := ca.GenerateHierarchy("backdate test", clock.now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.New(ca.Config{Lifetime: 90 * 24 * time.Hour}, h, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	week := 7 * 24 * time.Hour
	ps, err := acme.NewProfiles("p", map[string]acme.ProfileConfig{"p": {CertificateLifetime: &week}}, 90*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := acme.NewPolicy(acme.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	live := acme.Live{Policy: policy, Profiles: ps, Backdate: time.Minute}
	svc, err := acme.New(acme.Config{Owner: "backdate"}, live, acme.Deps{Store: st, Validator: &recorder{}, Now: clock.now, CA: c})
	if err != nil {
		t.Fatal(err)
	}
	signing := clock.now().Truncate(time.Second)

	issue := func(spec orderSpec) *acme.Certificate {
		t.Helper()
		caller, o, csr := seedOrder(t, st, clock.now(), spec)
		if got, err := svc.Finalize(t.Context(), caller, o.ID, csr); err != nil || got.Status != acme.StatusValid {
			t.Fatalf("finalize: %+v, %v", got, err)
		}
		certs, _, err := st.(acme.Inventory).ListCertificates(t.Context(), acme.CertQuery{AccountID: caller.Account.ID, Limit: 2})
		if err != nil || len(certs) != 1 {
			t.Fatalf("the certificate: %d stored, %v", len(certs), err)
		}
		cert, err := st.GetCertificate(t.Context(), certs[0].Serial)
		if err != nil {
			t.Fatal(err)
		}
		x, err := x509.ParseCertificate(cert.DER)
		if err != nil {
			t.Fatal(err)
		}
		if !x.NotBefore.Equal(cert.NotBefore) || !x.NotAfter.Equal(cert.NotAfter) {
			t.Errorf("stored validity %v to %v, the certificate's %v to %v", cert.NotBefore, cert.NotAfter, x.NotBefore, x.NotAfter)
		}
		return cert
	}

	cert := issue(orderSpec{names: []string{"www.example.com"}, profile: "p"})
	if want := signing.Add(-time.Minute); !cert.NotBefore.Equal(want) {
		t.Errorf("notBefore %v, want the signing time less the backdate, %v", cert.NotBefore, want)
	}
	if got := cert.NotAfter.Sub(cert.NotBefore); got != week {
		t.Errorf("notAfter - notBefore = %v, want the profile's lifetime %v", got, week)
	}
	if start, end := cert.RenewalStart, cert.RenewalEnd; start.Before(cert.NotBefore.Add(week/2)) || end.After(cert.NotAfter) || !end.After(start) {
		t.Errorf("renewal window %v to %v, want it inside the certificate's second half, %v to %v", start, end, cert.NotBefore.Add(week/2), cert.NotAfter)
	}

	asked := issue(orderSpec{names: []string{"asked.example.com"}, profile: "p", notAfter: 48 * time.Hour})
	if !asked.NotBefore.Equal(signing) || !asked.NotAfter.Equal(clock.now().Add(48*time.Hour).Truncate(time.Second)) {
		t.Errorf("an order asking for notAfter: %v to %v, want %v to the notAfter asked for", asked.NotBefore, asked.NotAfter, signing)
	}

	live.Backdate = 0
	svc.SetLive(live)
	if cert := issue(orderSpec{names: []string{"after.example.com"}, profile: "p"}); !cert.NotBefore.Equal(signing) || cert.NotAfter.Sub(cert.NotBefore) != week {
		t.Errorf("after a reload to no backdate: %v to %v, want %v and a week", cert.NotBefore, cert.NotAfter, signing)
	}
}
