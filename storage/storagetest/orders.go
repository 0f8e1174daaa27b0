// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testOrders checks CreateOrder with new authorizations and GetOrder.
func testOrders(t *testing.T, f *fixture) {
	acct := f.account(t)
	a1 := f.authz(acct.ID, "example.com", false, acme.StatusPending, at(24*time.Hour))
	a2 := f.authz(acct.ID, "example.com", true, acme.StatusPending, at(25*time.Hour))
	o := &acme.Order{
		ID:          acme.OrderID(f.id("order")),
		AccountID:   acct.ID,
		Status:      acme.StatusPending,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.com"}, {Type: acme.IdentifierDNS, Value: "*.example.com"}},
		AuthzIDs:    []acme.AuthzID{a1.ID, a2.ID},
		NotBefore:   at(time.Hour),
		NotAfter:    at(48 * time.Hour),
		Expires:     at(7 * 24 * time.Hour),
		CreatedAt:   at(3 * time.Second),
		Replaces:    "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE",
	}
	if err := f.s.CreateOrder(f.ctx, o, []*acme.Authorization{a1, a2}); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	want := *o
	want.AuthzIDs = append([]acme.AuthzID(nil), o.AuthzIDs...)
	o.AuthzIDs[0] = "mutated-after-create"

	got, err := f.s.GetOrder(f.ctx, want.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	checkOrder(t, "GetOrder", got, &want)
	got.AuthzIDs[0] = "mutated-after-get"
	got.Identifiers[0].Value = "mutated.example"
	again, err := f.s.GetOrder(f.ctx, want.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	checkOrder(t, "GetOrder after mutating a returned order", again, &want)

	for _, a := range []*acme.Authorization{a1, a2} {
		got, err := f.s.GetAuthz(f.ctx, a.ID)
		if err != nil {
			t.Fatalf("GetAuthz(%s): %v", a.ID, err)
		}
		checkAuthz(t, fmt.Sprintf("GetAuthz(%s)", a.ID), got, a)
	}

	// An order without the optional fields keeps them zero.
	plain := f.simpleOrder(t, acct.ID, "plain.example.com")
	got, err = f.s.GetOrder(f.ctx, plain.ID)
	if err != nil {
		t.Fatalf("GetOrder(plain): %v", err)
	}
	checkOrder(t, "GetOrder(plain)", got, plain)
	if !got.NotBefore.IsZero() || !got.NotAfter.IsZero() {
		t.Errorf("GetOrder(plain): NotBefore %v, NotAfter %v, want zero times", got.NotBefore, got.NotAfter)
	}
	if got.Error != nil {
		t.Errorf("GetOrder(plain): Error %v, want nil", got.Error)
	}

	// An order ID is unique.
	dup := *plain
	dup.AuthzIDs = nil
	wantErr(t, "CreateOrder(duplicate ID)", f.s.CreateOrder(f.ctx, &dup, nil), acme.ErrConflict)
}

// testOrderReusesAuthz checks that an order may name existing
// authorizations next to new ones.
func testOrderReusesAuthz(t *testing.T, f *fixture) {
	acct := f.account(t)
	first := f.simpleOrder(t, acct.ID, "a.example.com")
	reused := first.AuthzIDs[0]
	fresh := f.authz(acct.ID, "b.example.com", false, acme.StatusPending, at(24*time.Hour))
	o := f.order(t, acct.ID, []*acme.Authorization{fresh}, reused)

	got, err := f.s.GetOrder(f.ctx, o.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	checkOrder(t, "GetOrder", got, o)
	for _, id := range []acme.AuthzID{reused, fresh.ID} {
		if _, err := f.s.GetAuthz(f.ctx, id); err != nil {
			t.Errorf("GetAuthz(%s): %v", id, err)
		}
	}

	// An authorization of another account, or none, cannot be reused, next
	// to one that can: nothing of the order is written.
	other := f.simpleOrder(t, f.account(t).ID, "c.example.com")
	for _, bad := range []acme.AuthzID{other.AuthzIDs[0], "no-such-authz"} {
		newAuthz := f.authz(acct.ID, "d.example.com", false, acme.StatusPending, at(24*time.Hour))
		refused := &acme.Order{ID: acme.OrderID(f.id("order")), AccountID: acct.ID, Status: acme.StatusPending,
			Expires: at(7 * 24 * time.Hour), CreatedAt: at(2 * time.Second), Profile: "tls-server",
			Identifiers: []acme.Identifier{newAuthz.Identifier}, AuthzIDs: []acme.AuthzID{newAuthz.ID, reused, bad}}
		wantErr(t, fmt.Sprintf("CreateOrder(reusing %s)", bad), f.s.CreateOrder(f.ctx, refused, []*acme.Authorization{newAuthz}), acme.ErrNotFound)
		_, err := f.s.GetOrder(f.ctx, refused.ID)
		wantErr(t, "GetOrder(refused order)", err, acme.ErrNotFound)
		_, err = f.s.GetAuthz(f.ctx, newAuthz.ID)
		wantErr(t, "GetAuthz(refused order's new authorization)", err, acme.ErrNotFound)
	}
}

// testGetAuthzs checks that GetAuthzs returns the authorizations asked
// for, with their challenges, in the order asked (not the IDs' order),
// and that one missing makes it fail with ErrNotFound.
func testGetAuthzs(t *testing.T, f *fixture) {
	acct := f.account(t)
	a1 := f.authz(acct.ID, "a.example.com", false, acme.StatusPending, at(24*time.Hour))
	a2 := f.authz(acct.ID, "a.example.com", true, acme.StatusValid, at(25*time.Hour))
	a3 := f.authz(acct.ID, "c.example.com", false, acme.StatusInvalid, at(26*time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{a1, a2, a3})
	want := []*acme.Authorization{a3, a1, a2}
	ids := []acme.AuthzID{a3.ID, a1.ID, a2.ID}
	got, err := f.s.GetAuthzs(f.ctx, ids)
	if err != nil {
		t.Fatalf("GetAuthzs: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("GetAuthzs: %d authorizations, want %d", len(got), len(want))
	}
	for i := range want {
		checkAuthz(t, fmt.Sprintf("GetAuthzs[%d]", i), got[i], want[i])
	}
	if got, err := f.s.GetAuthzs(f.ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("GetAuthzs(none) = %d, %v; want none, nil", len(got), err)
	}
	_, err = f.s.GetAuthzs(f.ctx, []acme.AuthzID{a1.ID, "no-such-authz"})
	wantErr(t, "GetAuthzs(one missing)", err, acme.ErrNotFound)
}

// testOrderList checks the pagination of ListOrders.
func testOrderList(t *testing.T, f *fixture) {
	acct := f.account(t)
	other := f.account(t)
	var want []acme.OrderID
	for i := range 7 {
		want = append(want, f.simpleOrder(t, acct.ID, fmt.Sprintf("n%d.example.com", i)).ID)
		f.simpleOrder(t, other.ID, fmt.Sprintf("other%d.example.com", i))
	}

	var (
		got    []acme.OrderID
		cursor string
		sizes  []int
	)
	for page := 0; ; page++ {
		if page > 3 {
			t.Fatalf("ListOrders: still paging after %d pages (cursor %q)", page, cursor)
		}
		ids, next, err := f.s.ListOrders(f.ctx, acct.ID, cursor, 3)
		if err != nil {
			t.Fatalf("ListOrders(page %d): %v", page, err)
		}
		got = append(got, ids...)
		sizes = append(sizes, len(ids))
		if next == "" {
			break
		}
		if next == cursor {
			t.Fatalf("ListOrders(page %d): next cursor %q equals the current one", page, next)
		}
		cursor = next
	}
	if fmt.Sprint(sizes) != "[3 3 1]" {
		t.Errorf("ListOrders page sizes: got %v, want [3 3 1]", sizes)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ListOrders: got %v, want %v (oldest first)", got, want)
	}

	// An exact multiple of the page size ends without an empty page.
	ids, next, err := f.s.ListOrders(f.ctx, acct.ID, "", 7)
	if err != nil {
		t.Fatalf("ListOrders(limit 7): %v", err)
	}
	if len(ids) != 7 || next != "" {
		t.Errorf("ListOrders(limit 7): got %d IDs and next %q, want 7 and \"\"", len(ids), next)
	}

	// A cursor the store did not give out is ErrBadCursor, never read as
	// some position.
	for _, bad := range []string{"x", "-1", "+1", "01", " 1", "1.0", "1e3", "0x1", "9223372036854775808", strings.Repeat("9", 10_000)} {
		if _, _, err := f.s.ListOrders(f.ctx, acct.ID, bad, 3); !errors.Is(err, acme.ErrBadCursor) {
			t.Errorf("ListOrders(cursor %.20q): %v, want ErrBadCursor", bad, err)
		}
	}

	empty := f.account(t)
	ids, next, err = f.s.ListOrders(f.ctx, empty.ID, "", 3)
	if err != nil {
		t.Fatalf("ListOrders(no orders): %v", err)
	}
	if len(ids) != 0 || next != "" {
		t.Errorf("ListOrders(no orders): got %v and next %q, want none and \"\"", ids, next)
	}
}

// testOrderUpdate checks the compare-and-set of UpdateOrder and that it
// writes Status, Error and CertSerial.
func testOrderUpdate(t *testing.T, f *fixture) {
	acct := f.account(t)
	o := f.simpleOrder(t, acct.ID, "example.com")

	o.Status = acme.StatusProcessing
	if err := f.s.UpdateOrder(f.ctx, o, acme.StatusPending); err != nil {
		t.Fatalf("UpdateOrder(pending->processing): %v", err)
	}
	wantErr(t, "UpdateOrder(from pending, now processing)", f.s.UpdateOrder(f.ctx, o, acme.StatusPending), acme.ErrConflict)

	o.Status = acme.StatusInvalid
	o.Error = &acme.Problem{
		Type:       acme.ProbRejectedIdentifier,
		Detail:     "CAA forbids issuance",
		Status:     403,
		Identifier: &acme.Identifier{Type: acme.IdentifierDNS, Value: "example.com"},
		Subproblems: []*acme.Problem{
			{Type: acme.ProbCAA, Detail: "issue property", Status: 403,
				Identifier: &acme.Identifier{Type: acme.IdentifierIP, Value: "192.0.2.7"}},
		},
		Algorithms: []string{"ES256", "EdDSA"},
	}
	o.CertSerial = "abc123"
	if err := f.s.UpdateOrder(f.ctx, o, acme.StatusProcessing); err != nil {
		t.Fatalf("UpdateOrder(processing->invalid): %v", err)
	}
	got, err := f.s.GetOrder(f.ctx, o.ID)
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
	}
	checkOrder(t, "GetOrder after UpdateOrder", got, o)

	missing := *o
	missing.ID = "no-such-order"
	wantErr(t, "UpdateOrder(unknown)", f.s.UpdateOrder(f.ctx, &missing, acme.StatusInvalid), acme.ErrNotFound)
}

// testOrderDuplicateIDs checks that CreateOrder refuses a new
// authorization or challenge whose ID is taken, with an error wrapping
// acme.ErrConflict that names it, and stores nothing of the order.
func testOrderDuplicateIDs(t *testing.T, f *fixture) {
	acct := f.account(t)
	taken := f.authz(acct.ID, "taken.example.com", false, acme.StatusPending, at(24*time.Hour))
	f.order(t, acct.ID, []*acme.Authorization{taken})

	for _, tc := range []struct {
		name    string
		reuse   func(a *acme.Authorization)
		naming  func(a *acme.Authorization) string
		lastOne bool // the clash is in the order's last new authorization
	}{
		{"authorization", func(a *acme.Authorization) {
			a.ID = taken.ID
			for _, c := range a.Challenges {
				c.AuthzID = taken.ID
			}
		}, func(*acme.Authorization) string { return string(taken.ID) }, false},
		{"challenge", func(a *acme.Authorization) { a.Challenges[1].ID = taken.Challenges[0].ID },
			func(*acme.Authorization) string { return string(taken.Challenges[0].ID) }, true},
	} {
		first := f.authz(acct.ID, "first.example.com", false, acme.StatusPending, at(24*time.Hour))
		second := f.authz(acct.ID, "second.example.com", false, acme.StatusPending, at(24*time.Hour))
		clash := first
		if tc.lastOne {
			clash = second
		}
		tc.reuse(clash)
		o := &acme.Order{ID: acme.OrderID(f.id("order")), AccountID: acct.ID, Status: acme.StatusPending,
			Expires: at(7 * 24 * time.Hour), CreatedAt: at(2 * time.Second)}
		for _, a := range []*acme.Authorization{first, second} {
			o.Identifiers = append(o.Identifiers, a.Identifier)
			o.AuthzIDs = append(o.AuthzIDs, a.ID)
		}
		err := f.s.CreateOrder(f.ctx, o, []*acme.Authorization{first, second})
		wantErr(t, "CreateOrder(duplicate "+tc.name+" ID)", err, acme.ErrConflict)
		if err != nil && !strings.Contains(err.Error(), tc.naming(clash)) {
			t.Errorf("CreateOrder(duplicate %s ID): %v does not name %s", tc.name, err, tc.naming(clash))
		}
		if _, err := f.s.GetOrder(f.ctx, o.ID); !errors.Is(err, acme.ErrNotFound) {
			t.Errorf("duplicate %s ID: GetOrder after the refusal: %v, want ErrNotFound", tc.name, err)
		}
		for _, a := range []*acme.Authorization{first, second} {
			if a.ID == taken.ID {
				continue
			}
			if _, err := f.s.GetAuthz(f.ctx, a.ID); !errors.Is(err, acme.ErrNotFound) {
				t.Errorf("duplicate %s ID: GetAuthz(%s) after the refusal: %v, want ErrNotFound", tc.name, a.ID, err)
			}
		}
	}
}
