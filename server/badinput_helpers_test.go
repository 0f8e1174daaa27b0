// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/storage/sqlite"
)

// snapshotTables are every table of the ACME store.
var snapshotTables = []string{"accounts", "orders", "authzs", "challenges", "certificates", "eab_keys"}

// dbSnapshot is the row count and a digest of the contents of each table.
type dbSnapshot struct {
	counts  map[string]int
	digests map[string]string
}

// snapshot reads every table through the store's read pool.
func snapshotDB(t *testing.T, e *testEnv) dbSnapshot {
	t.Helper()
	db := e.srv.store.(*sqlite.Store).DB()
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

func wantAlgorithms(t *testing.T, p *acme.Problem) {
	if !slices.Equal(p.Algorithms, jws.Algorithms()) {
		t.Errorf("algorithms = %q; want %q", p.Algorithms, jws.Algorithms())
	}
}
func wantIdentifier(id acme.Identifier) func(*testing.T, *acme.Problem) {
	return func(t *testing.T, p *acme.Problem) {
		if p.Identifier == nil || *p.Identifier != id {
			t.Errorf("problem identifier = %v; want %+v", p.Identifier, id)
		}
	}
}

// wantSubproblems checks one subproblem of type typ per identifier.
func wantSubproblems(typ acme.ProblemType, ids ...acme.Identifier) func(*testing.T, *acme.Problem) {
	return func(t *testing.T, p *acme.Problem) {
		if len(p.Subproblems) != len(ids) {
			t.Fatalf("%d subproblems; want %d: %+v", len(p.Subproblems), len(ids), p.Subproblems)
		}
		var got []acme.Identifier
		for _, sp := range p.Subproblems {
			if sp.Type != typ || sp.Detail == "" {
				t.Errorf("subproblem %+v; want type %s with a detail", sp, typ)
			}
			if sp.Identifier == nil {
				t.Errorf("subproblem %q has no identifier", sp.Detail)
				continue
			}
			got = append(got, *sp.Identifier)
		}
		for _, id := range ids {
			if !slices.Contains(got, id) {
				t.Errorf("subproblem identifiers %+v lack %+v", got, id)
			}
		}
	}
}

// newOrderAs sends a new-order signed by key with kid.
func newOrderSignedBy(e *testEnv, key crypto.Signer, kid, url string) func(*testing.T) acmeenv.Response {
	return func(t *testing.T) acmeenv.Response {
		return e.PostJWS(key, url, []byte(`{"identifiers":[{"type":"dns","value":"kid.weir.test"}]}`), acmeenv.SignOpts{KID: kid})
	}
}

// checkServesAfterBadInput: after TestBadInput's refused requests the
// server still serves and issues (the snapshot sees those writes), and
// the ready order can still be finalized.
func checkServesAfterBadInput(t *testing.T, e *testEnv, clientA *xacme.Client, ready *xacme.Order) {
	t.Helper()
	ctx := t.Context()
	// The server still serves and issues; the snapshot sees the writes.
	res, err := e.HTTP.Get(e.Base + "/directory")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("directory after bad input: %d", res.StatusCode)
	}
	before := snapshotDB(t, e)
	chain, _ := e.Issue(ctx, clientA, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("after.weir.test")...)
	e.VerifyChain(chain, "after.weir.test")
	after := snapshotDB(t, e)
	for table, delta := range map[string]int{"orders": 1, "authzs": 1, "certificates": 1, "accounts": 0} {
		if got := after.counts[table] - before.counts[table]; got != delta {
			t.Errorf("issuance after bad input added %d %s rows; want %d", got, table, delta)
		}
	}
	// The ready order is still ready and can be finalized.
	certKey := acmeenv.NewKey(t)
	if _, _, err := clientA.CreateOrderCert(ctx, ready.FinalizeURL, acmeenv.CSRFor(t, certKey, "ready.weir.test"), false); err != nil {
		t.Fatalf("finalize the ready order after the bad CSRs: %v", err)
	}
}
