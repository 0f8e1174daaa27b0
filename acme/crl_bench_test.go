package acme

import (
	"fmt"
	"log/slog"
	"testing"
	"time"
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
	s := &Service{store: countingList{shared}, ca: crlTestIssuer(b), cfg: Config{CRLInterval: time.Hour}, now: time.Now,
		log: slog.New(slog.DiscardHandler), crl: &crlCache{}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.RegenerateCRL(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}
