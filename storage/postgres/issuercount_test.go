// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"crypto/rand"
	"math/big"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// TestCertIDExpressions: the SQL of the ARI identifiers gives what acme's
// functions give, for serials of every length and either high bit, and
// NULL where they refuse.
func TestCertIDExpressions(t *testing.T) {
	s := openFresh(t)
	part := "SELECT " + certIDSerialPartSQL("$1::text")
	serial := "SELECT " + certIDSerialSQL("$1::text")
	query := func(q, arg string) *string {
		t.Helper()
		var got *string
		if err := s.pool.QueryRow(t.Context(), q, arg).Scan(&got); err != nil {
			t.Fatalf("%s with %q: %v", q, arg, err)
		}
		return got
	}
	var serials []string
	for octets := 1; octets <= 20; octets++ {
		for range 8 {
			b := make([]byte, octets)
			_, _ = rand.Read(b)
			if n := new(big.Int).SetBytes(b); n.Sign() > 0 {
				serials = append(serials, ca.SerialHex(n))
			}
		}
	}
	serials = append(serials, "01", "7f", "80", "ff", "0100", "8000")
	for _, sn := range serials {
		want, ok := acme.CertIDSerialPart(sn)
		if !ok {
			t.Fatalf("CertIDSerialPart(%q) refused a serial of ca.SerialHex", sn)
		}
		if got := query(part, sn); got == nil || *got != want {
			t.Errorf("serial part of %s = %v, want %s", sn, got, want)
		}
		id := acme.CertIDPrefix([]byte{1, 2, 3}) + want
		if got := query(serial, id); got == nil || *got != sn {
			t.Errorf("serial of %s = %v, want %s", id, got, sn)
		}
	}
	for _, bad := range []string{"0005", "00", "abc", "ABCD", "xyz", ""} {
		if got := query(part, bad); got != nil {
			t.Errorf("serial part of %q = %s, want NULL", bad, *got)
		}
	}
	for _, bad := range []string{"no dot", "AAAA.", "AAAA.A", "AAAA.a+b/", "AAAA." + strings.Repeat("A", 40)} {
		if got := query(serial, bad); got != nil {
			t.Errorf("serial of %q = %s, want NULL", bad, *got)
		}
	}
}
