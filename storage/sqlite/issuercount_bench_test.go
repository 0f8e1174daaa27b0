// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"fmt"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/storage/transfer"
)

// The key identifiers of the benchmark's issuers.
var benchKeyA, benchKeyB = []byte("key of issuer a"), []byte("key of issuer b")

// migrationStore imports n certificates into a new store: two thirds of
// issuer a, a third of b, notAfter spread over 90 days around now, 5 %
// revoked, and a quarter of a's replaced by a renewal from b (one order
// each), and opens it.
func migrationStore(b *testing.B, n int) (*Store, time.Time) {
	b.Helper()
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "migration.db")
	im, err := OpenImport(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	accounts := (n + 49) / 50
	var accts []transfer.Account
	for i := 1; i <= accounts; i++ {
		accts = append(accts, transfer.Account{ID: int64(i), KeyThumbprint: fmt.Sprintf("t%d", i), Contact: "[]", Status: "valid", CreatedAt: now.UnixNano()})
	}
	if err := im.Accounts(ctx, accts); err != nil {
		b.Fatal(err)
	}
	der := make([]byte, 1000)
	const batch = 5000
	serial := func(i int) string { return ca.SerialHex(new(big.Int).SetInt64(int64(i)*7919 + 1<<62)) }
	for from := 0; from < n; from += batch {
		var orders []transfer.Order
		var certs []transfer.Certificate
		for i := from; i < min(from+batch, n); i++ {
			id, acct := fmt.Sprintf("order-%08d", i), int64(i%accounts)+1
			name := fmt.Sprintf("svc%d.team%d.bench.test", i, acct)
			issuer := "a"
			if i%3 == 2 {
				issuer = "b"
			}
			replaces := ""
			if issuer == "b" && i%2 == 0 {
				part, _ := acme.CertIDSerialPart(serial(i - 2))
				replaces = acme.CertIDPrefix(benchKeyA) + part
			}
			orders = append(orders, transfer.Order{Seq: int64(i) + 1, ID: id, AccountID: acct, Status: "valid", Identifiers: "[]", AuthzIDs: "[]",
				Expires: now.UnixNano(), CertSerial: serial(i), CreatedAt: now.UnixNano(), Replaces: replaces})
			notAfter := now.Add(90 * 24 * time.Hour / time.Duration(n) * time.Duration(i-n/2)).Truncate(time.Second)
			c := transfer.Certificate{Serial: serial(i), AccountID: acct, OrderID: id, DER: der,
				Names: fmt.Sprintf("[%q]", name), NameSet: name, NotBefore: notAfter.Add(-90 * 24 * time.Hour).UnixNano(),
				NotAfter: notAfter.UnixNano(), IssuedAt: notAfter.Add(-90 * 24 * time.Hour).UnixNano(),
				RenewalStart: notAfter.Add(-30 * 24 * time.Hour).UnixNano(), RenewalEnd: notAfter.Add(-28 * 24 * time.Hour).UnixNano(), Issuer: issuer}
			if i%20 == 19 {
				at := now.UnixNano()
				c.RevokedAt, c.Reason = &at, 1
			}
			certs = append(certs, c)
		}
		if err := im.Orders(ctx, orders); err != nil {
			b.Fatal(err)
		}
		if err := im.Certificates(ctx, certs); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := im.Finish(ctx, transfer.Summary{AccountSeq: int64(accounts), OrderSeq: int64(n)}); err != nil {
		b.Fatal(err)
	}
	if err := im.Close(); err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, now
}

// BenchmarkIssuerCounts: the issuer-migration view's counts of two
// issuers, at 10k and 100k certificates (at a million, 475k of them live,
// a call took 0.8 s on a 2-core virtual machine).
func BenchmarkIssuerCounts(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		s, now := migrationStore(b, n)
		q := acme.IssuerCountQuery{Now: now, Since: now.Add(-5 * time.Minute),
			Issuers: []acme.IssuerKey{{ID: "a", KeyID: benchKeyA}, {ID: "b", KeyID: benchKeyB}}}
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				c, err := s.IssuerCounts(b.Context(), q)
				if err != nil {
					b.Fatal(err)
				}
				if c[0].Live == 0 || c[0].Replaced == 0 || c[1].Replaced != 0 {
					b.Fatalf("counts %+v", c)
				}
			}
		})
	}
}
