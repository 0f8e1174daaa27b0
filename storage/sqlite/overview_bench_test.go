// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/transfer"
)

// overviewStore imports n certificates (one account per 50, one order
// each, 5 % revoked, notAfter spread over 90 days around now) into a new
// store through Import, and opens it.
func overviewStore(b *testing.B, n int) *Store {
	b.Helper()
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "overview.db")
	im, err := OpenImport(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	accounts := (n + 49) / 50
	var accts []transfer.Account
	for i := 1; i <= accounts; i++ {
		accts = append(accts, transfer.Account{ID: int64(i), KeyThumbprint: fmt.Sprintf("t%d", i), Contact: "[]", Status: "valid", CreatedAt: now.UnixNano()})
	}
	if err := im.Accounts(ctx, accts); err != nil {
		b.Fatal(err)
	}
	const batch = 5000
	for from := 0; from < n; from += batch {
		var orders []transfer.Order
		var certs []transfer.Certificate
		for i := from; i < min(from+batch, n); i++ {
			id, acct := fmt.Sprintf("order-%08d", i), int64(i%accounts)+1
			name := fmt.Sprintf("svc%d.team%d.bench.test", i, acct)
			orders = append(orders, transfer.Order{Seq: int64(i) + 1, ID: id, AccountID: acct, Status: "valid", Identifiers: "[]", AuthzIDs: "[]",
				Expires: now.UnixNano(), CertSerial: fmt.Sprintf("%032x", i), CreatedAt: now.UnixNano()})
			notAfter := now.Add(time.Duration(i-n/2) * 90 * 24 * time.Hour / time.Duration(n)).Truncate(time.Second)
			c := transfer.Certificate{Serial: fmt.Sprintf("%032x", i), AccountID: acct, OrderID: id, DER: []byte("der"),
				Names: fmt.Sprintf("[%q]", name), NameSet: name, NotBefore: notAfter.Add(-90 * 24 * time.Hour).UnixNano(),
				NotAfter: notAfter.UnixNano(), IssuedAt: notAfter.Add(-90 * 24 * time.Hour).UnixNano()}
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
	return s
}

// BenchmarkOverview: the dashboard overview's counts and certificate
// searches (a miss, a name, a domain of 50 certificates, a domain of
// every certificate) at 10k and 100k certificates. GroupBy is the full
// scan the counts replaced, for comparison.
func BenchmarkOverview(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		s := overviewStore(b, n)
		ctx := b.Context()
		run := func(name string, op func() error) {
			b.Run(fmt.Sprintf("%s/%dk", name, n/1000), func(b *testing.B) {
				var m cpuMeter
				m.start()
				for b.Loop() {
					if err := op(); err != nil {
						b.Fatal(err)
					}
				}
				m.report(b)
			})
		}
		run("Counts", func() error {
			c, err := s.Counts(ctx, time.Now())
			if err == nil && c.Certificates[acme.CertRevoked] != n/20 {
				err = fmt.Errorf("counts %+v", c)
			}
			return err
		})
		run("GroupBy", func() error {
			rows, err := s.r.QueryContext(ctx, `SELECT CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
				WHEN not_after <= ? THEN 'expired' ELSE 'active' END AS state, count(*)
				FROM certificates GROUP BY state`, time.Now().UnixNano())
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			return rows.Close()
		})
		for _, q := range []struct{ name, text string }{
			{"SearchMiss", "nothing.example.net"},
			{"SearchName", fmt.Sprintf("svc%d.team%d.bench.test", n/3, n/3%((n+49)/50)+1)},
			{"SearchDomain50", "team7.bench.test"},
			{"SearchDomainAll", "bench.test"},
		} {
			run(q.name, func() error {
				_, _, err := s.ListCertificates(ctx, acme.CertQuery{Search: q.text, Now: time.Now()})
				return err
			})
		}
	}
}
