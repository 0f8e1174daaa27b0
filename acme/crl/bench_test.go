// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

// BenchmarkRegenerateCRL: one CRL of 10,000 revocations (the store's list
// is in memory: what is measured is building and signing the CRL), with
// its cost per revoked entry.
func BenchmarkRegenerateCRL(b *testing.B) {
	const n = 10_000
	shared := &revokedList{}
	now := time.Now()
	for i := range n {
		shared.revoke(fmt.Sprintf("%032x", 0x100000+i), now)
	}
	s := maker(shared, only(crlTestIssuer(b)), Config{Interval: time.Hour})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Regenerate(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}

// BenchmarkRegenerateCRLShard: the regeneration after one revocation
// when the 10,000 revocations are spread over 16 CRL shards: one shard's
// CRL (about 625 entries) is listed and signed, the others kept.
func BenchmarkRegenerateCRLShard(b *testing.B) {
	const n, shards = 10_000, 16
	urls := make([]string, shards)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://crl.example.internal/crl/default/%d", i+1)
	}
	h, err := ca.GenerateHierarchy("bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	issuer, err := ca.New(ca.Config{Lifetime: time.Hour, CRLURL: "http://crl.example.internal/crl/default", CRLShardURLs: urls}, h, nil)
	if err != nil {
		b.Fatal(err)
	}
	store := &revokedList{}
	now := time.Now()
	for i := range n {
		store.revoked = append(store.revoked, Revocation{Serial: fmt.Sprintf("%032x", 0x100000+i), RevokedAt: now, Reason: 1,
			Issuer: defaultIssuer, Shard: 1 + i%shards})
	}
	s := maker(store, only(issuer), Config{Interval: time.Hour})
	if err := s.Regenerate(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		store.revoked = append(store.revoked, Revocation{Serial: fmt.Sprintf("%032x", 0x900000+i), RevokedAt: now, Reason: 1,
			Issuer: defaultIssuer, Shard: 1})
		s.mu.Lock()
		err := s.regenerate(b.Context(), false)
		s.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
}
