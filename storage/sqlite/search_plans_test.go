// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// explain returns the EXPLAIN QUERY PLAN of query with args, its steps
// joined by "; ".
func explain(t *testing.T, s *Store, query string, args []any) string {
	t.Helper()
	rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// TestSearchAndCountsPlans: the overview's counts and hourly issuance
// chart read only the kept counts, and a certificate search (that is not dense) reads the ranges
// of cert_search and of the serials and then each candidate by its
// serial: no step scans a table, so a search that matches nothing reads
// nothing of certificates.
func TestSearchAndCountsPlans(t *testing.T) {
	s := openTemp(t)
	seed(t, s)
	if _, err := s.w.ExecContext(t.Context(), `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	hourly, args := sqlrow.IssuanceQuery(time.Now().Truncate(time.Hour), time.Hour, 48)
	for what, plan := range map[string]string{
		"counts":   explain(t, s, sqlrow.CountsSQL, sqlrow.CountsArgs(time.Now())),
		"issuance": explain(t, s, hourly, args),
	} {
		for _, table := range []string{"accounts", "orders", "certificates"} {
			if strings.Contains(plan, " "+table) {
				t.Errorf("%s read %s: %s", what, table, plan)
			}
		}
	}
	for _, dense := range []bool{false, true} {
		for _, q := range []acme.CertQuery{{Search: "nothing.example.net"}, {Search: "x.org", AccountID: "1", State: acme.CertActive}} {
			q.Now = time.Now()
			p, ok, err := inventory().Certificates(q, certCols, dense)
			if !ok || err != nil {
				t.Fatal(ok, err)
			}
			plan := explain(t, s, p.SQL, p.Args)
			if (!dense && strings.Contains(plan, "SCAN certificates")) || strings.Contains(plan, "SCAN cert_search") {
				t.Errorf("search %+v (dense %v): plan %s", q, dense, plan)
			}
			if !dense && !strings.Contains(plan, "SEARCH cert_search USING PRIMARY KEY (key>? AND key<?)") {
				t.Errorf("search %+v: plan %s, want the ranges of cert_search", q, plan)
			}
		}
	}
	probe, args, _ := inventory().SearchProbe("nothing.example.net")
	if plan := explain(t, s, probe, args); strings.Contains(plan, "SCAN cert") {
		t.Errorf("probe: plan %s", plan)
	}
}

// TestSearchDenseSameMatches: a dense search finds what the ranges find.
func TestSearchDenseSameMatches(t *testing.T) {
	s := openTemp(t)
	a, _ := seed(t, s)
	for i, names := range [][]string{{"www.Shop.example.com", "shop.example.com"}, {"api.example.org"}, {"a_b.example.net"}} {
		o := &acme.Order{ID: acme.OrderID("order-d" + string(rune('a'+i))), AccountID: a.ID, Status: acme.StatusProcessing,
			Expires: fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
		for _, n := range names {
			o.Identifiers = append(o.Identifiers, acme.Identifier{Type: acme.IdentifierDNS, Value: n})
		}
		if err := s.CreateOrder(t.Context(), o, nil); err != nil {
			t.Fatal(err)
		}
		c := &acme.Certificate{Serial: "ab0" + string(rune('a'+i)), AccountID: a.ID, OrderID: o.ID, DER: []byte("der"),
			Names: names, NotBefore: fixedNow(), NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow().Add(time.Duration(i) * time.Second)}
		if err := s.FinalizeOrder(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{"SHOP.example.com", "www.shop", "example.com", "org", "example", "a_b", "a%b", "ab0", "01", "example.com,shop", "x"} {
		var got [2][]string
		for i, dense := range []bool{false, true} {
			p, _, err := inventory().Certificates(acme.CertQuery{Search: text, Now: fixedNow()}, certCols, dense)
			if err != nil {
				t.Fatal(err)
			}
			certs, err := collect(t.Context(), s, "search", p.SQL, p.Args, scanCert)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range certs {
				got[i] = append(got[i], c.Serial)
			}
		}
		if strings.Join(got[0], " ") != strings.Join(got[1], " ") {
			t.Errorf("search %q: ranges find %v, dense %v", text, got[0], got[1])
		}
	}
}
