// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestListOrdersBadCursor: a cursor the store did not give out is the
// client's mistake, 400 malformed with a bounded detail, not a
// serverInternal; the first page is still served.
func TestListOrdersBadCursor(t *testing.T) {
	st := openSQLite(t)
	svc := replica(t, st, "cursor", time.Now, &recorder{})
	caller, _ := seedAuthzs(t, st, time.Now(), 1)
	seedAuthzs(t, st, time.Now(), 1) // another account's order between
	for _, cursor := range []string{"abc", "-1", "+1", "01", "1.5", "AQID", "9223372036854775808", strings.Repeat("7", 100_000)} {
		_, _, err := svc.ListOrders(t.Context(), caller, caller.Account.ID, cursor, 10)
		var p *acme.Problem
		if !errors.As(err, &p) || p.Type != acme.ProbMalformed || p.Status != http.StatusBadRequest || p.Cause != nil {
			t.Fatalf("cursor %.20q: got %v; want 400 malformed without a cause to log", cursor, err)
		}
		if !strings.Contains(p.Detail, "cursor") || len(p.Detail) > 300 {
			t.Errorf("cursor %.20q: detail %q; want one of at most 300 bytes about the cursor", cursor, p.Detail)
		}
	}
	ids, next, err := svc.ListOrders(t.Context(), caller, caller.Account.ID, "", 10)
	if err != nil || len(ids) != 1 || next != "" {
		t.Fatalf("first page: %v, next %q, %v; want one order", ids, next, err)
	}
}
