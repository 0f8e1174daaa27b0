// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
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
			if d := before.diff(after); d != "" {
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

// snapshotTables are every table of the ACME store.
var snapshotTables = []string{"accounts", "orders", "authzs", "challenges", "certificates", "eab_keys"}

// dbSnapshot is the row count and a digest of the contents of each table.
type dbSnapshot struct {
	counts  map[string]int
	digests map[string]string
}

// snapshot reads every table through the store's read pool.
func snapshotDB(t *testing.T, e *env) dbSnapshot {
	t.Helper()
	db := e.srv.Store().(*sqlite.Store).DB()
	s := dbSnapshot{counts: map[string]int{}, digests: map[string]string{}}
	for _, table := range snapshotTables {
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		s.counts[table] = n
		rows, err := db.QueryContext(t.Context(), "SELECT * FROM "+table+" ORDER BY 1")
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		h := sha256.New()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		rows.Close()
		s.digests[table] = hex.EncodeToString(h.Sum(nil))
	}
	return s
}

// diff describes how after differs from s, "" when it does not.
func (s dbSnapshot) diff(after dbSnapshot) string {
	var out []string
	for _, table := range snapshotTables {
		switch {
		case s.counts[table] != after.counts[table]:
			out = append(out, fmt.Sprintf("%s: %d rows -> %d", table, s.counts[table], after.counts[table]))
		case s.digests[table] != after.digests[table]:
			out = append(out, fmt.Sprintf("%s: rows changed", table))
		}
	}
	return strings.Join(out, "; ")
}
