// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestQueryPlans: the queries served by partial indexes use them, so that
// the rows those indexes leave out (unrevoked certificates, pending
// authorizations, challenges no one validates) are never read or
// maintained for them.
func TestQueryPlans(t *testing.T) {
	s := openTemp(t)
	// FindValidAuthz's search must use every equality of the index (its
	// account_id = +? too) and the expiry range.
	const validSearch = "authzs_valid (account_id=? AND ident_type=? AND ident_value=? AND wildcard=? AND expires>?)"
	for _, tc := range []struct {
		name, query, index string
	}{
		{"FindValidAuthz", findValidAuthzSQL("0"), validSearch},
		{"FindValidAuthz wildcard", findValidAuthzSQL("1"), validSearch},
		{"ClaimChallenges", claimChallengesSQL, "challenges_processing"},
		{"ClaimOrders", claimOrdersSQL, "orders_processing"},
		{"ReplacingOrder", replacingOrderQuery, "orders_replaces_valid (replaces=?)"},
	} {
		got := queryPlan(t, s, tc.query)
		if !strings.Contains(got, "USING INDEX "+tc.index) && !strings.Contains(got, "USING COVERING INDEX "+tc.index) {
			t.Errorf("%s: plan %q, want the partial index %s", tc.name, got, tc.index)
		}
	}
	// The CRL's list and the planner's rebuild read their indexes alone:
	// no row, no DER.
	for _, tc := range []struct{ name, query, index string }{
		{"ListRevoked", readSQL[rListRevoked], "certificates_revoked"},
		{"RenewalWindows", renewalWindowsQuery, "certificates_renewal"},
	} {
		if got := queryPlan(t, s, tc.query); !strings.Contains(got, "USING COVERING INDEX "+tc.index) || strings.Contains(got, "TEMP B-TREE") ||
			(tc.name == "RenewalWindows" && !strings.Contains(got, "(renewal_end,serial)>(?,?)")) {
			t.Errorf("%s: plan %q, want the covering index %s and no sort", tc.name, got, tc.index)
		}
	}
	// The CRL shards in use are a few seeks of their index, each shard's
	// first entry and last expiry: never a scan of the certificates.
	if got := queryPlan(t, s, crlShardsInUseQuery); strings.Count(got, "SEARCH certificates USING COVERING INDEX certificates_crl_shard") != 3 ||
		strings.Contains(got, "SCAN certificates") {
		t.Errorf("CRLShardsInUse: plan %q, want three searches of the covering index certificates_crl_shard", got)
	}
	// The revoked count is one row of the counts kept, not a count of the
	// revoked certificates.
	if got := queryPlan(t, s, revokedCountQuery); !strings.Contains(got, "SEARCH object_counts USING PRIMARY KEY (kind=? AND status=?)") {
		t.Errorf("RevokedCount: plan %q, want one row of object_counts", got)
	}
	// The planner's refresh reads one range of an index from the page's
	// first time: what was issued or taken out since, not the table.
	for _, tc := range []struct{ name, query, want string }{
		{"IssuedWindows", issuedWindowsQuery, "USING INDEX certificates_issued (issued_at>?)"},
		{"PlanRemovals", planRemovalsQuery, "USING INDEX plan_removals_at (at>?)"},
	} {
		if got := queryPlan(t, s, tc.query); !strings.Contains(got, "SEARCH") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: plan %q, want a search %s", tc.name, got, tc.want)
		}
	}
	if _, err := s.RevokedCount(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// param matches a parameter of a query, ? or ?NNN.
var param = regexp.MustCompile(`\?(\d*)`)

// queryPlan returns the EXPLAIN QUERY PLAN of query, its steps joined by
// "; ".
func queryPlan(t *testing.T, s *Store, query string) string {
	t.Helper()
	// Every parameter is bound to NULL: the plan must not depend on the
	// values.
	n := 0
	for _, m := range param.FindAllStringSubmatch(query, -1) {
		if m[1] == "" {
			n++
		} else if i, _ := strconv.Atoi(m[1]); i > n {
			n = i
		}
	}
	return explain(t, s, query, make([]any, n))
}
