// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// dbAuthz, dbOrder and dbChallenge read straight from the database,
// past the object cache.
func dbAuthz(t *testing.T, s *Store, id acme.AuthzID) *acme.Authorization {
	t.Helper()
	rows, err := s.query(t.Context(), rGetAuthz, id)
	if err != nil {
		t.Fatalf("reading authorization %s: %v", id, err)
	}
	defer rows.Close()
	a, err := sqlrow.ScanAuthzRows(rows)
	if err != nil {
		t.Fatalf("reading authorization %s: %v", id, err)
	}
	return a
}

func dbOrder(t *testing.T, s *Store, id acme.OrderID) *acme.Order {
	t.Helper()
	o, err := sqlrow.ScanOrder(s.queryRow(t.Context(), rGetOrder, id))
	if err != nil {
		t.Fatalf("reading order %s: %v", id, err)
	}
	return o
}

func dbChallenge(t *testing.T, s *Store, id acme.ChallengeID) *acme.Challenge {
	t.Helper()
	c, err := sqlrow.ScanChallenge(s.queryRow(t.Context(), rGetChallenge, id))
	if err != nil {
		t.Fatalf("reading challenge %s: %v", id, err)
	}
	return c
}

// checkCached checks that order oid and authorization aid are in the
// cache and that GetOrder, GetAuthz and GetChallenge (of every challenge)
// return exactly what the database holds.
func checkCached(t *testing.T, s *Store, step string, oid acme.OrderID, aid acme.AuthzID) {
	t.Helper()
	ctx := t.Context()
	if s.cache.order(oid) == nil {
		t.Errorf("%s: order %s is not in the cache", step, oid)
	}
	if s.cache.authz(aid) == nil {
		t.Errorf("%s: authorization %s is not in the cache", step, aid)
	}
	o, err := s.GetOrder(ctx, oid)
	if err != nil {
		t.Fatalf("%s: GetOrder: %v", step, err)
	}
	if want := dbOrder(t, s, oid); !reflect.DeepEqual(o, want) {
		t.Errorf("%s: GetOrder:\n got %+v\nwant %+v (the database's)", step, o, want)
	}
	a, err := s.GetAuthz(ctx, aid)
	if err != nil {
		t.Fatalf("%s: GetAuthz: %v", step, err)
	}
	want := dbAuthz(t, s, aid)
	if !reflect.DeepEqual(a, want) {
		t.Errorf("%s: GetAuthz:\n got %s\nwant %s (the database's)", step, dumpAuthz(a), dumpAuthz(want))
	}
	for _, c := range want.Challenges {
		got, err := s.GetChallenge(ctx, c.ID)
		if err != nil {
			t.Fatalf("%s: GetChallenge(%s): %v", step, c.ID, err)
		}
		if want := dbChallenge(t, s, c.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: GetChallenge(%s):\n got %+v\nwant %+v (the database's)", step, c.ID, got, want)
		}
	}
}

func dumpAuthz(a *acme.Authorization) string {
	s := fmt.Sprintf("%+v", *a)
	for _, c := range a.Challenges {
		s += fmt.Sprintf("\n  %+v", *c)
		if c.Error != nil {
			s += fmt.Sprintf(" error %+v", *c.Error)
		}
	}
	return s
}

// cacheFixture creates an account and a pending order with one
// authorization of three challenges, all through the store.
func cacheFixture(t *testing.T, s *Store) (*acme.Order, *acme.Authorization) {
	t.Helper()
	ctx := t.Context()
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, acct); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	// A local zone and a monotonic reading, which the store drops: the
	// cache must hold what a read returns, not what was passed in.
	now := time.Now().In(time.FixedZone("X", 3600))
	a := &acme.Authorization{ID: "authz-1", AccountID: acct.ID, Status: acme.StatusPending,
		Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: "example.com"},
		Expires:    now.Add(time.Hour), CreatedAt: now}
	for i, typ := range []acme.ChallengeType{acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01} {
		a.Challenges = append(a.Challenges, &acme.Challenge{ID: acme.ChallengeID(fmt.Sprintf("chall-%d", i)), AuthzID: a.ID, Type: typ,
			Token: fmt.Sprintf("token-%d", i), Status: acme.StatusPending, UpdatedAt: now})
	}
	o := &acme.Order{ID: "order-1", AccountID: acct.ID, Status: acme.StatusPending,
		Identifiers: []acme.Identifier{a.Identifier}, AuthzIDs: []acme.AuthzID{a.ID},
		Expires: now.Add(time.Hour), CreatedAt: now, Profile: "classic"}
	if err := s.CreateOrder(ctx, o, []*acme.Authorization{a}); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	return o, a
}

// TestCacheFollowsWrites walks an order through every write that edits
// the cache and checks after each that the cached reads equal the
// database's, field for field.
func TestCacheFollowsWrites(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	o, a := cacheFixture(t, s)
	checkCached(t, s, "after CreateOrder", o.ID, a.ID)

	now := time.Now()
	if err := s.StartChallenge(ctx, "chall-0", "replica-1", now, time.Minute); err != nil {
		t.Fatalf("StartChallenge: %v", err)
	}
	checkCached(t, s, "after StartChallenge", o.ID, a.ID)

	// A compare-and-set that fails changes neither the database nor the
	// cache.
	if err := s.StartChallenge(ctx, "chall-0", "replica-1", now.Add(time.Second), time.Minute); !errors.Is(err, acme.ErrConflict) {
		t.Fatalf("StartChallenge of a processing challenge: got %v, want ErrConflict", err)
	}
	checkCached(t, s, "after a failed StartChallenge", o.ID, a.ID)

	ch, err := s.GetChallenge(ctx, "chall-1")
	if err != nil {
		t.Fatal(err)
	}
	ch.Status, ch.UpdatedAt = acme.StatusInvalid, now.Add(2*time.Second)
	ch.Error = acme.Unauthorized("nope").WithIdentifier(a.Identifier)
	ch.Error.Subproblems = []*acme.Problem{acme.Malformed("sub")}
	one, err := s.GetAuthz(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	one.Challenges = []*acme.Challenge{ch}
	if err := s.UpdateAuthz(ctx, one, acme.StatusPending); err != nil {
		t.Fatalf("UpdateAuthz of one challenge: %v", err)
	}
	checkCached(t, s, "after UpdateAuthz of one challenge", o.ID, a.ID)

	got, err := s.GetAuthz(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.Status, got.Expires = acme.StatusValid, now.Add(24*time.Hour)
	got.Challenges[0].Status, got.Challenges[0].Validated, got.Challenges[0].UpdatedAt = acme.StatusValid, now, now
	if err := s.UpdateAuthz(ctx, got, acme.StatusPending); err != nil {
		t.Fatalf("UpdateAuthz: %v", err)
	}
	checkCached(t, s, "after UpdateAuthz", o.ID, a.ID)
	if err := s.UpdateAuthz(ctx, got, acme.StatusPending); !errors.Is(err, acme.ErrConflict) {
		t.Fatalf("UpdateAuthz from pending again: got %v, want ErrConflict", err)
	}
	checkCached(t, s, "after a failed UpdateAuthz", o.ID, a.ID)

	if err := s.StartFinalize(ctx, o.ID, "replica-1", []byte("csr"), now, time.Minute); err != nil {
		t.Fatalf("StartFinalize: %v", err)
	}
	checkCached(t, s, "after StartFinalize", o.ID, a.ID)

	cert := &acme.Certificate{Serial: "0a", AccountID: o.AccountID, OrderID: o.ID, DER: []byte("der"),
		Names: []string{"example.com"}, NotBefore: now, NotAfter: now.Add(time.Hour), IssuedAt: now}
	if err := s.FinalizeOrder(ctx, cert); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	checkCached(t, s, "after FinalizeOrder", o.ID, a.ID)

	cur, err := s.GetOrder(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	cur.Status, cur.Error = acme.StatusInvalid, acme.Malformed("revoked by the test")
	if err := s.UpdateOrder(ctx, cur, acme.StatusValid); err != nil {
		t.Fatalf("UpdateOrder: %v", err)
	}
	checkCached(t, s, "after UpdateOrder", o.ID, a.ID)
}

// TestCacheReturnsCopies: changing what a read returned changes neither
// the cache nor the next read.
func TestCacheReturnsCopies(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	o, a := cacheFixture(t, s)
	got, err := s.GetAuthz(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.Status = acme.StatusValid
	got.Challenges[0].Status = acme.StatusValid
	got.Challenges[1] = nil
	ch, err := s.GetChallenge(ctx, "chall-2")
	if err != nil {
		t.Fatal(err)
	}
	ch.Token = "changed"
	ord, err := s.GetOrder(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	ord.Status = acme.StatusValid
	ord.AuthzIDs[0] = "changed"
	ord.Identifiers[0].Value = "changed.example"
	checkCached(t, s, "after changing returned objects", o.ID, a.ID)
}

// TestCacheConcurrentReadsAndWrites: readers that miss and fill race
// writers that edit; afterwards the cache equals the database. Run with
// -race, it also checks the locking.
func TestCacheConcurrentReadsAndWrites(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	o, a := cacheFixture(t, s)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 2000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Forget the objects now and then, so that reads miss
				// and fill while the writes below edit.
				if i%3 == 0 {
					s.cache.reset()
				}
				if _, err := s.GetAuthz(ctx, a.ID); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.GetOrder(ctx, o.ID); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	base := time.Now()
	for i := range 50 {
		cur, err := s.GetAuthz(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		from := cur.Status
		cur.Expires = base.Add(time.Duration(i+1) * time.Minute)
		cur.Challenges[2].UpdatedAt = base.Add(time.Duration(i) * time.Second)
		if err := s.UpdateAuthz(ctx, cur, from); err != nil {
			t.Fatalf("UpdateAuthz %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	// The readers may have emptied the cache last: fill it again.
	if _, err := s.GetAuthz(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetOrder(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	checkCached(t, s, "after concurrent reads and writes", o.ID, a.ID)
	if got, want := dbAuthz(t, s, a.ID).Expires, base.Add(50*time.Minute).Truncate(0).UTC(); !got.Equal(want) {
		t.Errorf("stored expiry: got %v, want the last write's %v", got, want)
	}
}

// TestCacheCertificates: FinalizeOrder caches the certificate as a read
// returns it, and a revocation or a renewal window makes the next read
// show the change.
func TestCacheCertificates(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	o, _ := cacheFixture(t, s)
	now := time.Now()
	if err := s.StartFinalize(ctx, o.ID, "replica-1", []byte("csr"), now, time.Minute); err != nil {
		t.Fatal(err)
	}
	cert := &acme.Certificate{Serial: "0b", AccountID: o.AccountID, OrderID: o.ID, DER: []byte("der"), ChainPEM: []byte("pem"),
		Names: []string{"example.com"}, NotBefore: now, NotAfter: now.Add(time.Hour), IssuedAt: now,
		Profile: "classic", RenewalStart: now.Add(30 * time.Minute), RenewalEnd: now.Add(40 * time.Minute)}
	if err := s.FinalizeOrder(ctx, cert); err != nil {
		t.Fatal(err)
	}
	if s.cache.cert(cert.Serial) == nil {
		t.Fatal("FinalizeOrder did not cache the certificate")
	}
	check := func(step string) {
		t.Helper()
		got, err := s.GetCertificate(ctx, cert.Serial)
		if err != nil {
			t.Fatalf("%s: GetCertificate: %v", step, err)
		}
		want, err := scanCert(s.queryRow(ctx, rGetCertificate, cert.Serial))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: GetCertificate:\n got %+v\nwant %+v (the database's)", step, got, want)
		}
	}
	check("after FinalizeOrder")
	got, _ := s.GetCertificate(ctx, cert.Serial)
	got.DER[0] = 'X'
	check("after changing a returned certificate")

	if err := s.RevokeCertificate(ctx, cert.Serial, 1, now, nil); err != nil {
		t.Fatal(err)
	}
	check("after RevokeCertificate")
	if c, _ := s.GetCertificate(ctx, cert.Serial); !c.Revoked() {
		t.Error("after RevokeCertificate: the certificate reads as not revoked")
	}

	// A second certificate, cached by its FinalizeOrder, gets a renewal
	// window.
	o2 := &acme.Order{ID: "order-2", AccountID: o.AccountID, Status: acme.StatusPending,
		Identifiers: o.Identifiers, AuthzIDs: o.AuthzIDs, Expires: now.Add(time.Hour), CreatedAt: now}
	if err := s.CreateOrder(ctx, o2, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.StartFinalize(ctx, o2.ID, "replica-1", []byte("csr"), now, time.Minute); err != nil {
		t.Fatal(err)
	}
	cert.Serial, cert.OrderID = "0c", o2.ID
	if err := s.FinalizeOrder(ctx, cert); err != nil {
		t.Fatal(err)
	}
	if s.cache.cert(cert.Serial) == nil {
		t.Fatal("FinalizeOrder did not cache the second certificate")
	}
	if err := s.SetRenewalWindows(ctx, []string{cert.Serial}, now.Add(-time.Hour), now, now); err != nil {
		t.Fatal(err)
	}
	check("after SetRenewalWindows")
	if c, _ := s.GetCertificate(ctx, cert.Serial); !c.RenewNow {
		t.Error("after SetRenewalWindows: RenewNow is false")
	}
}

// TestCacheAccounts: GetAccount caches what it reads; a status change or a
// key change shows at the next read.
func TestCacheAccounts(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	a := &acme.Account{Key: []byte(`{"kty":"EC","x":"1"}`), KeyThumbprint: "thumb-1", Contact: []string{"mailto:a@example.com"},
		Status: acme.StatusValid, CreatedAt: time.Now()}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	check := func(step string) *acme.Account {
		t.Helper()
		got, err := s.GetAccount(ctx, a.ID)
		if err != nil {
			t.Fatalf("%s: GetAccount: %v", step, err)
		}
		if s.cache.account(a.ID) == nil {
			t.Errorf("%s: the account is not in the cache after a read", step)
		}
		n, _ := strconv.ParseInt(string(a.ID), 10, 64)
		want, err := sqlrow.ScanAccount(s.queryRow(ctx, rGetAccount, n))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: GetAccount:\n got %+v\nwant %+v (the database's)", step, got, want)
		}
		return got
	}
	got := check("first read")
	got.Contact[0] = "mailto:changed@example.com"
	check("after changing a returned account")

	got.Status = acme.StatusDeactivated
	if err := s.UpdateAccount(ctx, got, acme.StatusValid); err != nil {
		t.Fatal(err)
	}
	if check("after UpdateAccount").Status != acme.StatusDeactivated {
		t.Error("after UpdateAccount: the account reads as not deactivated")
	}
	if err := s.ChangeAccountKey(ctx, a.ID, "thumb-1", "thumb-2", []byte(`{"kty":"EC","x":"2"}`)); err != nil {
		t.Fatal(err)
	}
	if check("after ChangeAccountKey").KeyThumbprint != "thumb-2" {
		t.Error("after ChangeAccountKey: the account reads with its old key")
	}
}
