// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testCertificates checks FinalizeOrder and GetCertificate.
func testCertificates(t *testing.T, f *fixture) {
	acct := f.account(t)
	o := f.processingOrder(t, acct.ID, "example.com")
	c := f.cert(o, "00aa11bb22cc33dd44ee55ff", at(90*24*time.Hour))
	c.Names = []string{"example.com", "www.example.com"}
	want := *c
	want.DER = append([]byte(nil), c.DER...)
	want.Validations = slices.Clone(c.Validations)
	if err := f.s.FinalizeOrder(f.ctx, c); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	c.DER[0] = 'X'
	c.Validations[0].Method = "mutated"

	got, err := f.s.GetCertificate(f.ctx, want.Serial)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	checkCert(t, "GetCertificate", got, &want)
	if got.Revoked() {
		t.Errorf("GetCertificate: Revoked() = true for a new certificate")
	}
	got.Names[0] = "mutated.example"
	got.DER[0] = 'Y'
	got.Validations[0].Method = "mutated"
	again, err := f.s.GetCertificate(f.ctx, want.Serial)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	checkCert(t, "GetCertificate after mutating a returned certificate", again, &want)

	order, err := f.s.GetOrder(f.ctx, o.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	if order.Status != acme.StatusValid || order.CertSerial != want.Serial {
		t.Errorf("order after FinalizeOrder: status %s, serial %q; want valid, %q", order.Status, order.CertSerial, want.Serial)
	}
}

// testFinalizeConcurrent checks that of many concurrent FinalizeOrder calls
// on one processing order exactly one issues.
func testFinalizeConcurrent(t *testing.T, f *fixture) {
	const n = 50
	acct := f.account(t)
	o := f.processingOrder(t, acct.ID, "example.com")
	certs := make([]*acme.Certificate, n)
	for i := range certs {
		certs[i] = f.cert(o, fmt.Sprintf("%032x", i+1), at(90*24*time.Hour))
	}

	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range certs {
		wg.Go(func() {
			<-start
			errs[i] = f.s.FinalizeOrder(f.ctx, certs[i])
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("FinalizeOrder: calls %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, acme.ErrConflict):
			t.Errorf("FinalizeOrder(call %d): got error %v, want one wrapping %v", i, err, acme.ErrConflict)
		}
	}
	if winner < 0 {
		t.Fatal("FinalizeOrder: no call succeeded")
	}

	for i, c := range certs {
		got, err := f.s.GetCertificate(f.ctx, c.Serial)
		if i == winner {
			if err != nil {
				t.Errorf("GetCertificate(winner %s): %v", c.Serial, err)
				continue
			}
			checkCert(t, "GetCertificate(winner)", got, c)
			continue
		}
		if !errors.Is(err, acme.ErrNotFound) {
			t.Errorf("GetCertificate(loser %s): got %v, %v; want an error wrapping %v", c.Serial, got, err, acme.ErrNotFound)
		}
	}
	order, err := f.s.GetOrder(f.ctx, o.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	if order.Status != acme.StatusValid || order.CertSerial != certs[winner].Serial {
		t.Errorf("order: status %s, serial %q; want valid, %q", order.Status, order.CertSerial, certs[winner].Serial)
	}
}

// testFinalizeNotProcessing checks that FinalizeOrder stores nothing unless
// the order is processing.
func testFinalizeNotProcessing(t *testing.T, f *fixture) {
	acct := f.account(t)
	pending := f.simpleOrder(t, acct.ID, "example.com")
	c := f.cert(pending, "0123456789abcdef", at(90*24*time.Hour))
	wantErr(t, "FinalizeOrder(pending order)", f.s.FinalizeOrder(f.ctx, c), acme.ErrConflict)
	_, err := f.s.GetCertificate(f.ctx, c.Serial)
	wantErr(t, "GetCertificate after failed FinalizeOrder", err, acme.ErrNotFound)
	o, err := f.s.GetOrder(f.ctx, pending.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	checkOrder(t, "order after failed FinalizeOrder", o, pending)

	// A valid order cannot be finalized again.
	done := f.issue(t, acct.ID, "done.example.com", at(90*24*time.Hour))
	order, err := f.s.GetOrder(f.ctx, done.OrderID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	second := f.cert(order, "fedcba9876543210", at(90*24*time.Hour))
	wantErr(t, "FinalizeOrder(valid order)", f.s.FinalizeOrder(f.ctx, second), acme.ErrConflict)
	_, err = f.s.GetCertificate(f.ctx, second.Serial)
	wantErr(t, "GetCertificate after second FinalizeOrder", err, acme.ErrNotFound)

	missing := f.cert(pending, "0f0f0f0f", at(90*24*time.Hour))
	missing.OrderID = "no-such-order"
	wantErr(t, "FinalizeOrder(unknown order)", f.s.FinalizeOrder(f.ctx, missing), acme.ErrNotFound)
}

// testRevoke checks RevokeCertificate.
func testRevoke(t *testing.T, f *fixture) {
	acct := f.account(t)
	c := f.issue(t, acct.ID, "example.com", at(90*24*time.Hour))
	revokedAt := at(time.Hour)
	const reason = 4 // superseded

	if err := f.s.RevokeCertificate(f.ctx, c.Serial, reason, revokedAt, nil); err != nil {
		t.Fatalf("RevokeCertificate: %v", err)
	}
	got, err := f.s.GetCertificate(f.ctx, c.Serial)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	want := *c
	want.RevokedAt, want.RevocationReason = revokedAt, reason
	checkCert(t, "GetCertificate after RevokeCertificate", got, &want)
	if !got.Revoked() {
		t.Errorf("GetCertificate: Revoked() = false after RevokeCertificate")
	}

	wantErr(t, "RevokeCertificate(again)",
		f.s.RevokeCertificate(f.ctx, c.Serial, 1, at(2*time.Hour), nil), acme.ErrConflict)
	got, err = f.s.GetCertificate(f.ctx, c.Serial)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	checkCert(t, "GetCertificate after second RevokeCertificate", got, &want)

	wantErr(t, "RevokeCertificate(unknown)",
		f.s.RevokeCertificate(f.ctx, "deadbeef", 0, at(time.Hour), nil), acme.ErrNotFound)
}

// testListRevoked checks that ListRevoked lists exactly the revoked,
// unexpired certificates.
func testListRevoked(t *testing.T, f *fixture) {
	acct := f.account(t)
	now := at(30 * 24 * time.Hour)
	revoked := f.issue(t, acct.ID, "revoked.example.com", at(90*24*time.Hour))
	expiring := f.issue(t, acct.ID, "expiring.example.com", now) // NotAfter == now: not yet expired
	expired := f.issue(t, acct.ID, "expired.example.com", now.Add(-time.Microsecond))
	f.issue(t, acct.ID, "good.example.com", at(90*24*time.Hour))

	for i, c := range []*acme.Certificate{revoked, expiring, expired} {
		if err := f.s.RevokeCertificate(f.ctx, c.Serial, 1, at(time.Duration(i)*time.Hour), nil); err != nil {
			t.Fatalf("RevokeCertificate(%s): %v", c.Serial, err)
		}
	}
	got, err := f.s.ListRevoked(f.ctx, now)
	if err != nil {
		t.Fatalf("ListRevoked: %v", err)
	}
	want := map[string]time.Time{revoked.Serial: at(0), expiring.Serial: at(time.Hour)}
	if len(got) != len(want) {
		t.Errorf("ListRevoked: got %d certificates, want %d", len(got), len(want))
	}
	for _, r := range got {
		w, ok := want[r.Serial]
		if !ok {
			t.Errorf("ListRevoked: got unexpected certificate %s", r.Serial)
			continue
		}
		if !r.RevokedAt.Equal(w) || r.Reason != 1 {
			t.Errorf("ListRevoked: certificate %s: revoked at %v, reason %d; want %v, 1", r.Serial, r.RevokedAt, r.Reason, w)
		}
	}

	got, err = f.s.ListRevoked(f.ctx, at(365*24*time.Hour))
	if err != nil {
		t.Fatalf("ListRevoked(later): %v", err)
	}
	if len(got) != 0 {
		t.Errorf("ListRevoked(after all expired): got %d certificates, want 0", len(got))
	}
}

// testNotFound checks that every lookup of an unknown ID fails with an
// error wrapping acme.ErrNotFound.
func testNotFound(t *testing.T, f *fixture) {
	acct := f.account(t)
	f.simpleOrder(t, acct.ID, "example.com")
	for name, call := range map[string]func() error{
		"GetAccount(number)":  func() error { _, err := f.s.GetAccount(f.ctx, "987654321"); return err },
		"GetAccount(garbage)": func() error { _, err := f.s.GetAccount(f.ctx, "not-an-id"); return err },
		"GetAccount(empty)":   func() error { _, err := f.s.GetAccount(f.ctx, ""); return err },
		"GetAccountByKey":     func() error { _, err := f.s.GetAccountByKey(f.ctx, "no-such-thumbprint"); return err },
		"GetOrder":            func() error { _, err := f.s.GetOrder(f.ctx, "no-such-order"); return err },
		"GetAuthz":            func() error { _, err := f.s.GetAuthz(f.ctx, "no-such-authz"); return err },
		"GetChallenge":        func() error { _, err := f.s.GetChallenge(f.ctx, "no-such-challenge"); return err },
		"GetCertificate":      func() error { _, err := f.s.GetCertificate(f.ctx, "00"); return err },
		"FindValidAuthz": func() error {
			_, err := f.s.FindValidAuthz(f.ctx, "987654321", acme.Identifier{Type: acme.IdentifierDNS, Value: "example.com"}, false, at(0))
			return err
		},
		"GetOrder(account ID)": func() error { _, err := f.s.GetOrder(f.ctx, acme.OrderID(acct.ID)); return err },
	} {
		wantErr(t, name, call(), acme.ErrNotFound)
	}
}

// testCertValidations checks that how each name of a certificate was
// validated is stored with it by FinalizeOrder and read back by
// GetCertificate and ListCertificates: every method (a challenge type, a
// delegated zone), the authorization, the time (in any zone) and
// whether the authorization was reused; and that a certificate stored
// without them reads back without them (nil: unknown, as for the rows
// stored before they were recorded), not as an empty list.
func testCertValidations(t *testing.T, f *fixture) {
	acct := f.account(t)
	o := f.processingOrder(t, acct.ID, "a.example.com")
	c := f.cert(o, "0a0b0c0d0e0f", at(90*24*time.Hour))
	c.Names = []string{"*.w.example.com", "a.example.com", "d.auto.example.com", "192.0.2.1"}
	c.Validations = []acme.NameValidation{
		{Name: "*.w.example.com", Method: string(acme.ChallengeDNS01), AuthzID: "authz-w", ValidatedAt: at(-time.Hour), Reused: true},
		{Name: "a.example.com", Method: string(acme.ChallengeHTTP01), AuthzID: "authz-a", ValidatedAt: at(time.Minute)},
		{Name: "d.auto.example.com", Method: acme.ValidationDelegated + ".auto.example.com", AuthzID: "authz-d", ValidatedAt: at(0)},
		{Name: "192.0.2.1", Method: string(acme.ChallengeTLSALPN01), AuthzID: "authz-ip", ValidatedAt: at(2 * time.Minute)},
	}
	if err := f.s.FinalizeOrder(f.ctx, c); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	unknown := f.cert(f.processingOrder(t, acct.ID, "old.example.com"), "0a0b0c0d0e10", at(91*24*time.Hour))
	unknown.Validations = nil
	if err := f.s.FinalizeOrder(f.ctx, unknown); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	for _, want := range []*acme.Certificate{c, unknown} {
		got, err := f.s.GetCertificate(f.ctx, want.Serial)
		if err != nil {
			t.Fatalf("GetCertificate(%s): %v", want.Serial, err)
		}
		checkCert(t, "GetCertificate", got, want)
	}
	inv, ok := f.s.(acme.Inventory)
	if !ok {
		return
	}
	list, _, err := inv.ListCertificates(f.ctx, acme.CertQuery{AccountID: acct.ID, Limit: 10})
	if err != nil {
		t.Fatalf("ListCertificates: %v", err)
	}
	if len(list) != 2 {
		t.Fatalf("ListCertificates: %d certificates, want 2", len(list))
	}
	checkCert(t, "ListCertificates", list[0], unknown)
	checkCert(t, "ListCertificates", list[1], c)
}
