// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testRevokedByIssuer checks that a certificate keeps the issuer and CRL
// shard it was stored with (DefaultIssuer when it named none), that
// ListRevoked says whose CRL lists each revocation, and
// crl.ScopedRevocations: the counts and lists of each CRL's scope.
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
		if err := f.s.RevokeCertificate(f.ctx, c.Serial, 1, at(time.Minute), nil); err != nil {
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
	sr := f.s
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

// testCRLNumbers checks crl.Numberer: each issuer's and shard's
// numbers grow by one from the floor, never below it, independently of
// the others', and concurrent callers never get the same number.
func testCRLNumbers(t *testing.T, f *fixture) {
	cn := f.s
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

// testCRLShardsInUse checks acme.CRLShardLister: the shards of an
// issuer's certificates not expired at a time, revoked or not, in order,
// and none of another issuer's or of expired certificates.
func testCRLShardsInUse(t *testing.T, f *fixture) {
	sl, ok := f.s.(acme.CRLShardLister)
	if !ok {
		t.Fatalf("%T does not implement acme.CRLShardLister: lowering ca.crl-shards would drop the CRLs of the shards above it", f.s)
	}
	acct := f.account(t)
	for i, c := range []struct {
		issuer  string
		shard   int
		expires time.Duration
		revoke  bool
	}{
		{"", 0, 30 * 24 * time.Hour, false}, // stored as the default issuer
		{acme.DefaultIssuer, 3, 60 * 24 * time.Hour, true},
		{acme.DefaultIssuer, 3, 10 * 24 * time.Hour, false},
		{acme.DefaultIssuer, 2, 10 * 24 * time.Hour, false},
		{acme.DefaultIssuer, 7, time.Hour, false}, // expired at the later reads
		{"r2", 5, 90 * 24 * time.Hour, false},
	} {
		o := f.processingOrder(t, acct.ID, fmt.Sprintf("shard%d.example.com", i))
		crt := f.cert(o, fmt.Sprintf("%040x", 0x5a00+i), at(c.expires))
		crt.Issuer, crt.CRLShard = c.issuer, c.shard
		if err := f.s.FinalizeOrder(f.ctx, crt); err != nil {
			t.Fatalf("FinalizeOrder(shard %d): %v", c.shard, err)
		}
		if c.revoke {
			if err := f.s.RevokeCertificate(f.ctx, crt.Serial, 1, at(time.Minute), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		issuer string
		now    time.Time
		want   []int
	}{
		{acme.DefaultIssuer, at(0), []int{0, 2, 3, 7}},
		{acme.DefaultIssuer, at(time.Hour), []int{0, 2, 3, 7}}, // expiring at the time: still in use
		{acme.DefaultIssuer, at(2 * time.Hour), []int{0, 2, 3}},
		{acme.DefaultIssuer, at(20 * 24 * time.Hour), []int{0, 3}},
		{acme.DefaultIssuer, at(40 * 24 * time.Hour), []int{3}}, // the revoked one
		{acme.DefaultIssuer, at(61 * 24 * time.Hour), nil},
		{"r2", at(0), []int{5}},
		{"r3", at(0), nil},
	} {
		got, err := sl.CRLShardsInUse(f.ctx, tc.issuer, tc.now)
		if err != nil {
			t.Fatalf("CRLShardsInUse(%q, %v): %v", tc.issuer, tc.now, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("CRLShardsInUse(%q, base+%v) = %v, want %v", tc.issuer, tc.now.Sub(base()), got, tc.want)
		}
	}
}
