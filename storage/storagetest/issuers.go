package storagetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testRevokedByIssuer checks that a certificate keeps the issuer and CRL
// shard it was stored with (DefaultIssuer when it named none), that
// ListRevoked says whose CRL lists each revocation, and
// acme.ScopedRevocations: the counts and lists of each CRL's scope.
func testRevokedByIssuer(t *testing.T, f *fixture) {
	acct := f.account(t)
	want := map[string]string{}
	shards := map[string]int{}
	for i, issuer := range []string{"", acme.DefaultIssuer, "r2", "r2", "r2"} {
		o := f.processingOrder(t, acct.ID, "issuer.example.com")
		c := f.cert(o, fmt.Sprintf("%040x", f.n), at(90*24*time.Hour))
		c.Issuer = issuer
		c.CRLShard = i / 3 * (i - 2) // 0, 0, 0, 1, 2
		shards[c.Serial] = c.CRLShard
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
		if r.Issuer != want[r.Serial] || r.Shard != shards[r.Serial] {
			t.Errorf("ListRevoked: %s has issuer %q shard %d, want %q %d", r.Serial, r.Issuer, r.Shard, want[r.Serial], shards[r.Serial])
		}
	}
	sr, ok := f.s.(acme.ScopedRevocations)
	if !ok {
		t.Fatalf("%T does not implement acme.ScopedRevocations: every CRL would be remade on each revocation", f.s)
	}
	counts, err := sr.RevokedCounts(f.ctx)
	if err != nil {
		t.Fatalf("RevokedCounts: %v", err)
	}
	wantCounts := map[acme.CRLScope]int64{{Issuer: acme.DefaultIssuer}: 2, {Issuer: "r2"}: 1, {Issuer: "r2", Shard: 1}: 1, {Issuer: "r2", Shard: 2}: 1}
	if len(counts) != len(wantCounts) {
		t.Errorf("RevokedCounts = %v, want %v", counts, wantCounts)
	}
	for sc, n := range wantCounts {
		if counts[sc] != n {
			t.Errorf("RevokedCounts[%v] = %d, want %d", sc, counts[sc], n)
		}
		list, err := sr.ListRevokedScope(f.ctx, sc, at(time.Hour))
		if err != nil {
			t.Fatalf("ListRevokedScope(%v): %v", sc, err)
		}
		if int64(len(list)) != n {
			t.Errorf("ListRevokedScope(%v): %d revocations, want %d", sc, len(list), n)
		}
		for _, r := range list {
			if r.Issuer != sc.Issuer || r.Shard != sc.Shard {
				t.Errorf("ListRevokedScope(%v) lists %s of issuer %q shard %d", sc, r.Serial, r.Issuer, r.Shard)
			}
		}
		if later, err := sr.ListRevokedScope(f.ctx, sc, at(365*24*time.Hour)); err != nil || len(later) != 0 {
			t.Errorf("ListRevokedScope(%v) after they expired: %d revocations (%v), want none", sc, len(later), err)
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
