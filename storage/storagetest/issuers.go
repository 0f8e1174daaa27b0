package storagetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testRevokedByIssuer checks that a certificate keeps the issuer it was
// stored with (DefaultIssuer when it named none), and that ListRevoked
// says whose CRL lists each revocation.
func testRevokedByIssuer(t *testing.T, f *fixture) {
	acct := f.account(t)
	want := map[string]string{}
	for _, issuer := range []string{"", acme.DefaultIssuer, "r2", "r2"} {
		o := f.processingOrder(t, acct.ID, "issuer.example.com")
		c := f.cert(o, fmt.Sprintf("%040x", f.n), at(90*24*time.Hour))
		c.Issuer = issuer
		if err := f.s.FinalizeOrder(f.ctx, c); err != nil {
			t.Fatalf("FinalizeOrder(issuer %q): %v", issuer, err)
		}
		got, err := f.s.GetCertificate(f.ctx, c.Serial)
		if err != nil {
			t.Fatalf("GetCertificate: %v", err)
		}
		checkCert(t, "GetCertificate of issuer "+issuer, got, c)
		if err := f.s.RevokeCertificate(f.ctx, c.Serial, 1, at(time.Minute)); err != nil {
			t.Fatalf("RevokeCertificate: %v", err)
		}
		want[c.Serial] = issuer
		if issuer == "" {
			want[c.Serial] = acme.DefaultIssuer
		}
	}
	revoked, err := f.s.ListRevoked(f.ctx, at(time.Hour))
	if err != nil {
		t.Fatalf("ListRevoked: %v", err)
	}
	if len(revoked) != len(want) {
		t.Errorf("ListRevoked: %d revocations, want %d", len(revoked), len(want))
	}
	for _, r := range revoked {
		if r.Issuer != want[r.Serial] {
			t.Errorf("ListRevoked: %s has issuer %q, want %q", r.Serial, r.Issuer, want[r.Serial])
		}
	}
}

// testCRLNumbers checks acme.CRLNumberer: each issuer's and shard's
// numbers grow by one from the floor, never below it, independently of
// the others', and concurrent callers never get the same number.
func testCRLNumbers(t *testing.T, f *fixture) {
	cn, ok := f.s.(acme.CRLNumberer)
	if !ok {
		t.Fatalf("%T does not implement acme.CRLNumberer: the CRL numbers of replicas would not grow", f.s)
	}
	next := func(issuer string, shard int, floor, want int64) {
		t.Helper()
		n, err := cn.NextCRLNumber(f.ctx, issuer, shard, floor)
		if err != nil {
			t.Fatalf("NextCRLNumber(%q, %d, %d): %v", issuer, shard, floor, err)
		}
		if n != want {
			t.Errorf("NextCRLNumber(%q, %d, %d) = %d, want %d", issuer, shard, floor, n, want)
		}
	}
	next("a", 0, 1, 1)
	next("a", 0, 1, 2)
	next("a", 0, 0, 3)
	next("a", 1, 1, 1)
	next("b", 0, 100, 100)
	next("a", 0, 50, 50) // the floor is above the last: taken
	next("a", 0, 10, 51) // a clock stepped back: still one more
	next("b", 0, 0, 101)

	const workers, each = 4, 25
	var (
		mu   sync.Mutex
		seen = map[int64]bool{}
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for range each {
				n, err := cn.NextCRLNumber(f.ctx, "c", 0, 0)
				if err != nil {
					t.Errorf("NextCRLNumber: %v", err)
					return
				}
				mu.Lock()
				if seen[n] {
					t.Errorf("NextCRLNumber gave %d twice", n)
				}
				seen[n] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	next("c", 0, 0, workers*each+1)
}
