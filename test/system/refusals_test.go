// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/storage/sqlite"
)

// badCase is one refused request.
type badCase struct {
	name string
	// prep runs before the "before" snapshot, for set-up that must not
	// count (e.g. spending a nonce).
	prep   func(t *testing.T)
	send   func(t *testing.T) acmeenv.Response
	status int
	typ    acme.ProblemType
	detail string
	// check, when set, inspects the decoded problem further.
	check func(t *testing.T, p *acme.Problem)
}

// runRefused sends each case to e as a subtest and checks that it is
// refused with its problem (type, status, detail) and leaves no trace in
// the database, and that the response carries a fresh nonce, which spend
// must use successfully (RFC 8555 §6.5: errors carry nonces too).
func runRefused(t *testing.T, e *env, cases []badCase, spend func(t *testing.T, nonce string) acmeenv.Response) {
	t.Helper()
	seenNonces := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prep != nil {
				tc.prep(t)
			}
			before := snapshotDB(t, e)
			res := tc.send(t)
			after := snapshotDB(t, e)
			if d := before.Diff(after); d != "" {
				t.Errorf("the refused request changed the database: %s", d)
			}

			var p acme.Problem
			if err := json.Unmarshal(res.Body, &p); err != nil {
				t.Fatalf("status %d, body %q is not a problem document: %v", res.Status, res.Body, err)
			}
			if res.Status != tc.status || p.Type != tc.typ {
				t.Fatalf("got %d %s; want %d %s (body %s)", res.Status, p.Type, tc.status, tc.typ, res.Body)
			}
			if p.Status != res.Status {
				t.Errorf("problem status %d; want the HTTP status %d", p.Status, res.Status)
			}
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q; want it to contain %q", p.Detail, tc.detail)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q; want application/problem+json", ct)
			}
			if tc.check != nil {
				tc.check(t, &p)
			}

			n := res.Header.Get("Replay-Nonce")
			if n == "" {
				t.Fatal("no Replay-Nonce")
			}
			if seenNonces[n] {
				t.Fatalf("Replay-Nonce %q was already sent", n)
			}
			seenNonces[n] = true
			if use := spend(t, n); use.Status != http.StatusOK {
				t.Errorf("using the Replay-Nonce: %d %s", use.Status, use.Body)
			}
		})
	}
}

// snapshotDB reads every table of e's SQLite store (systest.Snapshot).
func snapshotDB(t *testing.T, e *env) systest.Snapshot {
	t.Helper()
	return systest.SnapshotDB(t, e.srv.Store().(*sqlite.Store).DB())
}
