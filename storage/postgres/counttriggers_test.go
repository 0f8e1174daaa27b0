// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"fmt"
	"testing"
	"time"
)

// TestCountTriggersMatchRows drives every path of the count triggers
// (0008, rewritten by 0020) with plain SQL, as an import or an operator
// would: certificates inserted live and revoked, revoked and restored,
// deleted live and revoked, orders and accounts changing status and
// deleted. After each step every kept count equals a recount from the
// rows themselves.
func TestCountTriggersMatchRows(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Each pair: the kept count's rows summed, and the recount from the
	// table they count, both as (key, n) rows with n nonzero.
	checks := []struct{ name, kept, recount string }{
		{"object_counts",
			`SELECT kind || '/' || status, sum(n) FROM object_counts GROUP BY 1 HAVING sum(n) <> 0`,
			`SELECT 'accounts/' || status, count(*) FROM accounts GROUP BY 1
			 UNION ALL SELECT 'orders/' || status, count(*) FROM orders GROUP BY 1
			 UNION ALL SELECT 'certificates/', count(*) FROM certificates HAVING count(*) > 0
			 UNION ALL SELECT 'revoked/', count(*) FROM certificates WHERE revoked_at IS NOT NULL HAVING count(*) > 0`},
		{"cert_expiry_hours",
			`SELECT hour::text, sum(n) FROM cert_expiry_hours GROUP BY 1 HAVING sum(n) <> 0`,
			`SELECT (not_after / 3600000000000)::text, count(*) FROM certificates WHERE revoked_at IS NULL GROUP BY 1`},
		{"cert_expiry_seconds",
			`SELECT second::text, sum(n) FROM cert_expiry_seconds GROUP BY 1 HAVING sum(n) <> 0`,
			`SELECT (not_after / 1000000000)::text, count(*) FROM certificates WHERE revoked_at IS NULL GROUP BY 1`},
		{"cert_issued_hours",
			`SELECT hour::text, sum(n) FROM cert_issued_hours GROUP BY 1 HAVING sum(n) <> 0`,
			`SELECT (issued_at / 3600000000000)::text, count(*) FROM certificates GROUP BY 1`},
		{"cert_search",
			`SELECT key || ' ' || serial, 1::bigint FROM cert_search`,
			`SELECT k || ' ' || c.serial, 1::bigint FROM certificates c, json_array_elements_text(c.names::json) AS n (v),
			     LATERAL (VALUES ('>' || lower(v)), ('<' || reverse(lower(v)))) AS x (k) GROUP BY 1`},
	}
	read := func(q string) map[string]int64 {
		t.Helper()
		rows, err := s.pool.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		m := map[string]int64{}
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			m[k] += n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	step := func(what string) {
		t.Helper()
		for _, c := range checks {
			kept, want := read(c.kept), read(c.recount)
			if fmt.Sprint(kept) != fmt.Sprint(want) {
				t.Errorf("after %s: %s kept %v, recounted %v", what, c.name, kept, want)
			}
		}
	}

	a, _ := seed(t, s)
	step("an issuance through the store")
	hour := int64(time.Hour)
	exec(`INSERT INTO orders (id, account_id, status, identifiers, authz_ids, expires, created_at)
		VALUES ('o-sql', $1, 'pending', '[]', '[]', 0, 0)`, a.ID)
	exec(`UPDATE orders SET status = 'ready' WHERE id = 'o-sql'`)
	exec(`UPDATE orders SET status = 'ready' WHERE id = 'o-sql'`) // no change: no count
	step("an order's status changes")
	for i, revoked := range []any{nil, nil, int64(5), nil} {
		exec(`INSERT INTO certificates (serial, account_id, order_id, names, name_set, not_before, not_after, issued_at, revoked_at)
			VALUES ($1, $2, 'o-sql', $3, 'x', 0, $4, $5, $6)`,
			fmt.Sprint("s", i), a.ID, fmt.Sprintf(`["A%d.Example.com","b.example.com"]`, i),
			int64(i+1)*hour+int64(i)*int64(time.Second), int64(i)*hour, revoked)
	}
	step("certificates inserted live and revoked")
	exec(`UPDATE certificates SET revoked_at = 7, reason = 1 WHERE serial = 's0'`)
	exec(`UPDATE certificates SET revoked_at = 9 WHERE serial = 's0'`) // still revoked: no count
	exec(`UPDATE certificates SET reason = 4 WHERE serial = 's1'`)     // not revoked_at: no trigger
	step("a revocation")
	exec(`UPDATE certificates SET revoked_at = NULL WHERE serial = 's2'`)
	step("a revocation undone")
	exec(`DELETE FROM certificates WHERE serial IN ('s0', 's1')`)
	step("a revoked and a live certificate deleted")
	exec(`DELETE FROM certificates WHERE order_id = 'o-sql'`)
	exec(`DELETE FROM orders WHERE id = 'o-sql'`)
	exec(`UPDATE accounts SET status = 'deactivated' WHERE id = $1`, a.ID)
	step("an order deleted and an account deactivated")
}
