// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// The key identifiers of the issuers of testIssuerCounts.
var (
	keyOld = []byte{0xfa, 0xce, 0x01, 0xd0}
	keyNew = []byte{0x0b, 0xad, 0x5e, 0xed}
)

// migrationCert is a certificate of testIssuerCounts, relative to its now.
type migrationCert struct {
	issuer  string
	shard   int
	serial  string        // in weir's form
	expires time.Duration // NotAfter - now
	ended   time.Duration // RenewalEnd - now; 0 stores no window
	issued  time.Duration // IssuedAt - now
	revoked bool
	// replaces is the certificate it replaces, by its serial, under the
	// key identifier key; "" for none.
	replaces string
	key      []byte
}

// testIssuerCounts checks acme.IssuerCounter: per issuer, at now, the
// live certificates (not revoked, notAfter after now: of every CRL
// shard, none expired or revoked), the earliest and latest expiry of
// those, the ones a valid order replaced (by the identifier under the
// issuer's key; a pending replacement, or one under another key, is not
// one), the ones not replaced whose stored window ended (none without a
// window), the certificates issued since a time (inclusive), and its live
// certificates replaced since then by another issuer's.
func testIssuerCounts(t *testing.T, f *fixture) {
	ic, ok := f.s.(acme.IssuerCounter)
	if !ok {
		t.Fatalf("%T does not implement acme.IssuerCounter: the issuer-migration view needs it", f.s)
	}
	now := at(10 * 24 * time.Hour)
	since := now.Add(-5 * time.Minute)
	const day = 24 * time.Hour
	certs := []migrationCert{
		{issuer: "old", serial: "9a01", expires: 30 * day, ended: -day, issued: -60 * day},                                       // overdue (high bit: a zero octet in its ID)
		{issuer: "old", serial: "1b02", expires: 60 * day, ended: -day, issued: -30 * day},                                       // replaced by r1
		{issuer: "old", serial: "1b03", expires: 10 * day, ended: day, issued: -80 * day},                                        // replaced by r2, the first to expire
		{issuer: "old", serial: "9a04", expires: 20 * day, ended: day, issued: -70 * day},                                        // a pending renewal
		{issuer: "old", serial: "1b05", expires: 40 * day, ended: -day, issued: -50 * day, revoked: true},                        // revoked: not live
		{issuer: "old", serial: "1b06", expires: 0, ended: -30 * day, issued: -90 * day},                                         // expires now: not live
		{issuer: "old", shard: 2, serial: "0c07", expires: 89 * day, ended: -time.Hour, issued: -day},                            // overdue, on shard 2, the last
		{issuer: "old", serial: "1b08", expires: 50 * day, issued: -40 * day},                                                    // no window
		{issuer: "old", serial: "9a09", expires: 70 * day, ended: -2 * day, issued: -20 * day},                                   // replaced by r4, of its own issuer
		{issuer: "new", serial: "2c01", expires: 90 * day, ended: 60 * day, issued: -time.Minute, replaces: "1b02", key: keyOld}, // r1
		{issuer: "new", serial: "2c02", expires: 89 * day, ended: 59 * day, issued: -time.Hour, replaces: "1b03", key: keyOld},   // r2: before since
		{issuer: "new", serial: "2c03", expires: 90 * day, ended: 60 * day, issued: -2 * time.Minute, replaces: "1b05", key: keyOld},
		{issuer: "new", serial: "9c04", expires: 90 * day, ended: 60 * day, issued: -time.Minute, replaces: "1b08", key: keyNew}, // another key: no renewal of 1b08
		{issuer: "new", serial: "2c05", expires: 80 * day, ended: 50 * day, issued: -10 * day},
		{issuer: "old", serial: "1b0a", expires: 88 * day, ended: 60 * day, issued: -5 * time.Minute, replaces: "9a09", key: keyOld}, // r4, issued at since
	}
	acct := f.account(t)
	for i, mc := range certs {
		c := f.migrationCert(t, acct.ID, fmt.Sprintf("m%d.example.com", i), now, mc)
		if mc.revoked {
			if err := f.s.RevokeCertificate(f.ctx, c.Serial, 1, now.Add(-day), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A renewal of 9a04 not finalized: not a replacement.
	f.renewalOrder(t, acct.ID, "pending.example.com", certIDOf(keyOld, "9a04"))

	got, err := ic.IssuerCounts(f.ctx, acme.IssuerCountQuery{Now: now, Since: since,
		Issuers: []acme.IssuerKey{{ID: "old", KeyID: keyOld}, {ID: "new", KeyID: keyNew}, {ID: "none", KeyID: []byte{1}}}})
	if err != nil {
		t.Fatalf("IssuerCounts: %v", err)
	}
	want := []acme.IssuerCount{
		{Issuer: "old", Live: 8, FirstExpiry: now.Add(10 * day), LastExpiry: now.Add(89 * day), Replaced: 3, Overdue: 2, Issued: 1, RenewedOff: 1},
		{Issuer: "new", Live: 5, FirstExpiry: now.Add(80 * day), LastExpiry: now.Add(90 * day), Issued: 3},
		{Issuer: "none"},
	}
	if len(got) != len(want) {
		t.Fatalf("IssuerCounts = %+v, want %+v", got, want)
	}
	for i, w := range want {
		g := got[i]
		var d diffs
		add(&d, "Issuer", g.Issuer, w.Issuer)
		add(&d, "Live", g.Live, w.Live)
		d.addTime("FirstExpiry", g.FirstExpiry, w.FirstExpiry)
		d.addTime("LastExpiry", g.LastExpiry, w.LastExpiry)
		add(&d, "Replaced", g.Replaced, w.Replaced)
		add(&d, "Overdue", g.Overdue, w.Overdue)
		add(&d, "Issued", g.Issued, w.Issued)
		add(&d, "RenewedOff", g.RenewedOff, w.RenewedOff)
		d.report(t, "IssuerCounts of "+w.Issuer)
	}

	// Later, r1's replacement is no longer recent and the first ones expired.
	got, err = ic.IssuerCounts(f.ctx, acme.IssuerCountQuery{Now: now.Add(25 * day), Since: now, Issuers: []acme.IssuerKey{{ID: "old", KeyID: keyOld}}})
	if err != nil {
		t.Fatalf("IssuerCounts later: %v", err)
	}
	if g := got[0]; g.Live != 6 || g.Replaced != 2 || g.Overdue != 2 || g.Issued != 0 || g.RenewedOff != 0 ||
		!g.FirstExpiry.Equal(now.Add(30*day)) || !g.LastExpiry.Equal(now.Add(89*day)) {
		t.Errorf("IssuerCounts 25 days later = %+v, want 6 live (9a01, 1b02, 0c07, 1b08, 9a09, 1b0a) from +30d to +89d, "+
			"2 replaced (1b02, 9a09), 2 overdue (9a01, 0c07), nothing recent", g)
	}
}

// certIDOf is the ARI identifier of the certificate of serial under key.
func certIDOf(key []byte, serial string) string {
	part, ok := acme.CertIDSerialPart(serial)
	if !ok {
		panic("not a serial in weir's form: " + serial)
	}
	return acme.CertIDPrefix(key) + part
}

// renewalOrder creates a pending order of accountID for name that
// replaces certID.
func (f *fixture) renewalOrder(t *testing.T, accountID acme.AccountID, name, certID string) *acme.Order {
	t.Helper()
	a := f.authz(accountID, name, false, acme.StatusPending, at(24*time.Hour))
	o := &acme.Order{ID: acme.OrderID(f.id("order")), AccountID: accountID, Status: acme.StatusPending,
		Identifiers: []acme.Identifier{a.Identifier}, AuthzIDs: []acme.AuthzID{a.ID}, Expires: at(7 * 24 * time.Hour),
		CreatedAt: at(2 * time.Second), Replaces: certID}
	if err := f.s.CreateOrder(f.ctx, o, []*acme.Authorization{a}); err != nil {
		t.Fatalf("CreateOrder(replacing %s): %v", certID, err)
	}
	return o
}

// migrationCert issues mc for name to accountID, at now.
func (f *fixture) migrationCert(t *testing.T, accountID acme.AccountID, name string, now time.Time, mc migrationCert) *acme.Certificate {
	t.Helper()
	var o *acme.Order
	if mc.replaces != "" {
		o = f.renewalOrder(t, accountID, name, certIDOf(mc.key, mc.replaces))
		o.Status = acme.StatusProcessing
		if err := f.s.UpdateOrder(f.ctx, o, acme.StatusPending); err != nil {
			t.Fatal(err)
		}
	} else {
		o = f.processingOrder(t, accountID, name)
	}
	c := f.cert(o, mc.serial, now.Add(mc.expires))
	c.Issuer, c.CRLShard = mc.issuer, mc.shard
	c.IssuedAt = now.Add(mc.issued)
	c.RenewalStart, c.RenewalEnd = time.Time{}, time.Time{}
	if mc.ended != 0 {
		c.RenewalStart, c.RenewalEnd = now.Add(mc.ended-time.Hour), now.Add(mc.ended)
	}
	if err := f.s.FinalizeOrder(f.ctx, c); err != nil {
		t.Fatalf("FinalizeOrder(%s): %v", mc.serial, err)
	}
	return c
}
