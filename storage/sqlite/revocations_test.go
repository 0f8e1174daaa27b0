package sqlite

import (
	"strings"
	"testing"
)

// TestRevokedCountPlan: RevokedCount reads the partial index of revoked
// certificates only, whatever the number of certificates.
func TestRevokedCountPlan(t *testing.T) {
	s := openTemp(t)
	rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+revokedCountQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	got := strings.Join(plan, "; ")
	if !strings.Contains(got, "USING INDEX certificates_revoked") {
		t.Errorf("plan %q, want the partial index certificates_revoked", got)
	}
	if _, err := s.RevokedCount(t.Context()); err != nil {
		t.Fatal(err)
	}
}
