// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestStoredAsRead: the order, authorizations and certificate a write
// caches without reading them back (stored.go) equal what a read of the
// database returns, field for field, for inputs at the edges of each
// column: zero and zoned times with a monotonic reading, NULL and set
// problem documents, empty and missing lists and byte slices, no
// challenges.
func TestStoredAsRead(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(time.FixedZone("X", -7200)) // zoned, with a monotonic reading
	problem := acme.Unauthorized("no").WithIdentifier(acme.Identifier{Type: acme.IdentifierDNS, Value: "a.example"})
	problem.Subproblems = []*acme.Problem{acme.Malformed("sub")}

	for i, tc := range []struct {
		name   string
		order  func(o *acme.Order)
		authzs []*acme.Authorization
		cert   *acme.Certificate
	}{
		{name: "plain", authzs: []*acme.Authorization{{Status: acme.StatusPending, Expires: now.Add(time.Hour), CreatedAt: now,
			Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: "a.example"},
			Challenges: []*acme.Challenge{
				{Type: acme.ChallengeHTTP01, Token: "t1", Status: acme.StatusPending, UpdatedAt: now},
				{Type: acme.ChallengeDNS01, Token: "t2", Status: acme.StatusPending, UpdatedAt: now},
			}}},
			cert: &acme.Certificate{DER: []byte("der"), ChainPEM: []byte("pem"), Names: []string{"a.example"},
				NotBefore: now, NotAfter: now.Add(time.Hour), IssuedAt: now, Profile: "classic",
				RenewalStart: now.Add(time.Minute), RenewalEnd: now.Add(2 * time.Minute)}},
		{name: "every optional column set", order: func(o *acme.Order) {
			o.NotBefore, o.NotAfter, o.Error = now.Add(-time.Hour), now.Add(48*time.Hour), problem
			o.CertSerial, o.Replaces, o.Profile = "0f", "aaaa.bbbb", "tlsserver"
			o.Urgent, o.CSR = true, []byte("not stored by CreateOrder")
		}, authzs: []*acme.Authorization{{Status: acme.StatusValid, Expires: now.Add(time.Hour), CreatedAt: now, Wildcard: true,
			Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: "w.example"},
			Challenges: []*acme.Challenge{
				{Type: acme.ChallengeDNS01, Token: "t3", Status: acme.StatusValid, Validated: now, UpdatedAt: now},
				{Type: acme.ChallengeHTTP01, Token: "t4", Status: acme.StatusInvalid, Error: problem, UpdatedAt: now},
			}}},
			cert: &acme.Certificate{DER: []byte{}, ChainPEM: nil, Names: nil, NotBefore: now, NotAfter: now, IssuedAt: now,
				RevocationReason: 4, RenewNow: true}},
		{name: "no identifiers, an authorization without challenges, zero times",
			order: func(o *acme.Order) {
				o.Identifiers, o.Expires, o.CreatedAt = []acme.Identifier{}, time.Time{}, time.Unix(0, 0)
			},
			authzs: []*acme.Authorization{{Status: acme.StatusPending, Identifier: acme.Identifier{Type: acme.IdentifierIP, Value: "192.0.2.1"}}},
			cert:   &acme.Certificate{Names: []string{}}},
		{name: "no new authorizations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &acme.Order{ID: acme.OrderID(fmt.Sprintf("order-%d", i)), AccountID: acct.ID, Status: acme.StatusPending,
				Expires: now.Add(time.Hour), CreatedAt: now}
			for j, a := range tc.authzs {
				a.ID, a.AccountID = acme.AuthzID(fmt.Sprintf("authz-%d-%d", i, j)), acct.ID
				for k, c := range a.Challenges {
					c.ID, c.AuthzID = acme.ChallengeID(fmt.Sprintf("chall-%d-%d-%d", i, j, k)), "ignored"
				}
				o.Identifiers, o.AuthzIDs = append(o.Identifiers, a.Identifier), append(o.AuthzIDs, a.ID)
			}
			if tc.order != nil {
				tc.order(o)
			}
			if err := s.CreateOrder(ctx, o, tc.authzs); err != nil {
				t.Fatalf("CreateOrder: %v", err)
			}
			if got, want := s.cache.order(o.ID), dbOrder(t, s, o.ID); !reflect.DeepEqual(got, want) {
				t.Errorf("cached order:\n got %+v\nwant %+v (the database's)", got, want)
			}
			for _, a := range tc.authzs {
				if got, want := s.cache.authz(a.ID), dbAuthz(t, s, a.ID); !reflect.DeepEqual(got, want) {
					t.Errorf("cached authorization:\n got %s\nwant %s (the database's)", dumpAuthz(got), dumpAuthz(want))
				}
			}
			if tc.cert == nil {
				return
			}
			if err := s.StartFinalize(ctx, o.ID, "replica-1", []byte("csr"), now, time.Minute); err != nil {
				t.Fatal(err)
			}
			c := tc.cert
			c.Serial, c.AccountID, c.OrderID = fmt.Sprintf("%02x", i), acct.ID, o.ID
			if err := s.FinalizeOrder(ctx, c); err != nil {
				t.Fatalf("FinalizeOrder: %v", err)
			}
			want, err := scanCert(s.queryRow(ctx, rGetCertificate, c.Serial))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.cache.cert(c.Serial); !reflect.DeepEqual(got, want) {
				t.Errorf("cached certificate:\n got %+v\nwant %+v (the database's)\nDER %#v %#v ChainPEM %#v %#v", got, want, got.DER, want.DER, got.ChainPEM, want.ChainPEM)
			}
		})
	}
}
