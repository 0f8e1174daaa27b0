// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/pgcount"
)

// TestCreateOrderRoundTrips counts CreateOrder's round trips on the wire:
// one for an order whose authorizations are all new (BEGIN, the inserts
// and COMMIT in one batch, inOneTrip), three for one that reuses an
// authorization (the batch, the check of the reused one, the COMMIT). A
// failed one costs its batch and a ROLLBACK, stores nothing, and leaves
// its connection fit for the next call.
func TestCreateOrderRoundTrips(t *testing.T) {
	_, dsn := freshSchema(t)
	p, through, err := pgcount.StartDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s, err := Open(t.Context(), Config{DSN: through, MaxConns: 1}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a, _ := seed(t, s)
	n := 0
	authz := func() *acme.Authorization {
		n++
		id := acme.AuthzID(fmt.Sprint("authz-rt-", n))
		z := &acme.Authorization{ID: id, AccountID: a.ID, Status: acme.StatusPending,
			Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: fmt.Sprintf("rt%d.example.com", n)},
			Expires:    fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
		for _, typ := range []acme.ChallengeType{acme.ChallengeHTTP01, acme.ChallengeDNS01} {
			z.Challenges = append(z.Challenges, &acme.Challenge{ID: acme.ChallengeID(fmt.Sprint(id, "-", typ)), AuthzID: id,
				Type: typ, Token: fmt.Sprint("token-", id, typ), Status: acme.StatusPending, UpdatedAt: fixedNow()})
		}
		return z
	}
	create := func(reused []acme.AuthzID, fresh ...*acme.Authorization) (int64, error) {
		o := &acme.Order{ID: acme.OrderID(fmt.Sprint("order-rt-", n)), AccountID: a.ID, Status: acme.StatusPending,
			Expires: fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
		for _, z := range fresh {
			o.Identifiers, o.AuthzIDs = append(o.Identifiers, z.Identifier), append(o.AuthzIDs, z.ID)
		}
		for range reused {
			o.Identifiers = append(o.Identifiers, acme.Identifier{Type: acme.IdentifierDNS, Value: "reused.example.com"})
		}
		o.AuthzIDs = append(o.AuthzIDs, reused...)
		before := p.Trips()
		err := s.CreateOrder(t.Context(), o, fresh)
		return p.Trips() - before, err
	}
	first := authz()
	if _, err := create(nil, first); err != nil { // prepares the statements
		t.Fatal(err)
	}
	if trips, err := create(nil, authz(), authz()); err != nil || trips != 1 {
		t.Errorf("CreateOrder of two new authorizations: %d round trips, %v; want 1", trips, err)
	}
	if _, err := create([]acme.AuthzID{first.ID}, authz()); err != nil { // prepares the check
		t.Fatal(err)
	}
	if trips, err := create([]acme.AuthzID{first.ID}, authz()); err != nil || trips != 3 {
		t.Errorf("CreateOrder reusing an authorization: %d round trips, %v; want 3", trips, err)
	}
	taken := authz()
	taken.Challenges[1].ID = first.Challenges[0].ID
	trips, err := create(nil, authz(), taken)
	if !errors.Is(err, acme.ErrConflict) || trips != 2 {
		t.Errorf("CreateOrder with a taken challenge ID: %d round trips, %v; want 2 and a conflict", trips, err)
	}
	if _, err := s.GetOrder(t.Context(), acme.OrderID(fmt.Sprint("order-rt-", n))); !errors.Is(err, acme.ErrNotFound) {
		t.Errorf("the refused order: GetOrder %v, want ErrNotFound", err)
	}
	if _, err := create(nil, authz()); err != nil { // the one connection is out of the aborted transaction
		t.Errorf("CreateOrder after a refused one: %v", err)
	}
}
