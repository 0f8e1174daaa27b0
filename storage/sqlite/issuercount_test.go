// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
)

// TestIssuerCountPlan: the issuer-migration view reads an issuer's live
// certificates from certificates_crl_shard alone, one range of unexpired
// entries per shard (twice: the counts, then the replaced ones), looks
// each one's replacement up once in orders_replaces_valid, and reads the
// recent certificates by certificates_issued: no step scans a table or
// reads a certificate's row but the few of the recent interval.
func TestIssuerCountPlan(t *testing.T) {
	s := openTemp(t)
	plan := queryPlan(t, s, issuerCountQuery)
	for _, want := range []string{
		"SEARCH o EXISTS USING COVERING INDEX orders_replaces_valid (replaces=?)",
		"SEARCH n USING INDEX certificates_issued (issued_at>?)",
		"SEARCH old USING INDEX sqlite_autoindex_certificates_1 (serial=?)",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan %q lacks %q", plan, want)
		}
	}
	const live = "SEARCH c USING COVERING INDEX certificates_crl_shard (issuer=? AND crl_shard=? AND not_after>?)"
	if n := strings.Count(plan, live); n != 2 {
		t.Errorf("plan %q reads the live certificates %d times by %q, want twice", plan, n, live)
	}
	if n := strings.Count(plan, "orders_replaces_valid"); n != 1 {
		t.Errorf("plan %q looks replacements up %d times, want once", plan, n)
	}
	if strings.Contains(plan, "SCAN c") || strings.Contains(plan, "SCAN certificates") || strings.Contains(plan, "SCAN o") {
		t.Errorf("plan %q scans a table", plan)
	}
}

// TestCertIDFunctions: the SQL functions are acme's, NULL for what acme
// refuses.
func TestCertIDFunctions(t *testing.T) {
	s := openTemp(t)
	for _, tc := range []struct {
		fn, arg string
		want    any
	}{
		{fnCertIDSerialPart, "9a01", "AJoB"},
		{fnCertIDSerialPart, "0c07", "DAc"},
		{fnCertIDSerialPart, "0005", nil}, // not weir's form
		{fnCertIDSerialPart, "xyz", nil},
		{fnCertIDSerial, "AAAA.AJoB", "9a01"},
		{fnCertIDSerial, "AAAA.mgE", "9a01"}, // without the zero octet, as mod_md sends it
		{fnCertIDSerial, "not an identifier", nil},
	} {
		var got any
		if err := s.r.QueryRowContext(t.Context(), "SELECT "+tc.fn+"(?)", tc.arg).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s(%q) = %v, want %v", tc.fn, tc.arg, got, tc.want)
		}
		var ok bool
		switch tc.fn {
		case fnCertIDSerialPart:
			_, ok = acme.CertIDSerialPart(tc.arg)
		default:
			_, ok = acme.CertIDSerial(tc.arg)
		}
		if ok != (tc.want != nil) {
			t.Errorf("acme's %s(%q) ok = %v, the SQL function's %v", tc.fn, tc.arg, ok, got)
		}
	}
}
