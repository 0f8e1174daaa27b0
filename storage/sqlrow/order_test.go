// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"errors"
	"reflect"
	"testing"

	"github.com/weir-pki/weir/acme"
)

// TestOrdersPage: the arguments of a page are checked, one row more than
// the limit is asked for, and the cursor of the next page is the
// sequence number of the page's last order, only when there is more.
func TestOrdersPage(t *testing.T) {
	const d Driver = "sqlite"
	if _, _, err := NewOrdersPage(d, "7", "", 0); err == nil {
		t.Error("NewOrdersPage(limit 0) = nil error")
	}
	if _, _, err := NewOrdersPage(d, "7", "07", 3); !errors.Is(err, acme.ErrBadCursor) {
		t.Errorf("NewOrdersPage(cursor 07) = %v; want ErrBadCursor", err)
	}
	if _, ok, err := NewOrdersPage(d, "no-such-id", "", 3); ok || err != nil {
		t.Errorf("NewOrdersPage(account no-such-id) = %v, %v; want an empty page", ok, err)
	}
	p, ok, err := NewOrdersPage(d, "7", "41", 2)
	if !ok || err != nil {
		t.Fatalf("NewOrdersPage = %v, %v", ok, err)
	}
	if got, want := p.Values(), []any{int64(7), int64(41), 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("Values = %v; want %v", got, want)
	}
	rows := []Seq[acme.OrderID]{{42, "a"}, {45, "b"}, {50, "c"}}
	for _, tc := range []struct {
		rows     []Seq[acme.OrderID]
		wantIDs  []acme.OrderID
		wantNext string
	}{
		{nil, nil, ""},
		{rows[:1], []acme.OrderID{"a"}, ""},
		{rows[:2], []acme.OrderID{"a", "b"}, ""},
		{rows, []acme.OrderID{"a", "b"}, "45"},
	} {
		ids, next := p.Page(tc.rows)
		if !reflect.DeepEqual(ids, tc.wantIDs) || next != tc.wantNext {
			t.Errorf("Page(%v) = %v, %q; want %v, %q", tc.rows, ids, next, tc.wantIDs, tc.wantNext)
		}
	}
}

// TestNewOrderRow: the authorizations an order names but is not created
// with are the ones it reuses; a bad account or time is refused.
func TestNewOrderRow(t *testing.T) {
	const d Driver = "postgres"
	o := &acme.Order{ID: "o1", AccountID: "3", Status: acme.StatusPending, AuthzIDs: []acme.AuthzID{"old", "new", "older"}}
	r, err := NewOrderRow(d, o, []*acme.Authorization{{ID: "new", AccountID: "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []acme.AuthzID{"old", "older"}; !reflect.DeepEqual(r.Reused, want) {
		t.Errorf("Reused = %v; want %v", r.Reused, want)
	}
	if r.AccountID != 3 || r.Identifiers != "[]" || r.AuthzIDs != `["old","new","older"]` || r.Error != nil {
		t.Errorf("row = %+v", r)
	}
	if _, err := NewOrderRow(d, &acme.Order{ID: "o2", AccountID: "x"}, nil); !errors.Is(err, acme.ErrNotFound) {
		t.Errorf("NewOrderRow(account x) = %v; want ErrNotFound", err)
	}
	if _, err := NewOrderRow(d, &acme.Order{ID: "", AccountID: "3"}, nil); err == nil {
		t.Error("NewOrderRow(empty ID) = nil error")
	}
	if _, err := NewOrderRow(d, &acme.Order{ID: "o3", AccountID: "3", Expires: MaxTime.AddDate(1, 0, 0)}, nil); err == nil {
		t.Error("NewOrderRow(expires after 2262) = nil error")
	}
}
