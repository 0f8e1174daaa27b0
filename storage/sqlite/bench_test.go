// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// benchStore opens a store in a temporary directory with the writer's
// synchronous pragma set to mode, and an account to write for.
func benchStore(b *testing.B, mode string) (*Store, *acme.Account) {
	b.Helper()
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	// The writer pool holds exactly one long-lived connection, so the
	// pragma sticks.
	if _, err := s.w.ExecContext(b.Context(), "PRAGMA synchronous="+mode); err != nil {
		b.Fatalf("PRAGMA synchronous=%s: %v", mode, err)
	}
	a := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "bench", Status: acme.StatusValid, CreatedAt: time.Now()}
	if err := s.CreateAccount(b.Context(), a); err != nil {
		b.Fatalf("CreateAccount: %v", err)
	}
	return s, a
}

// cpuMeter reports the process CPU time per operation of a benchmark as
// the metric cpu-ns/op, which, unlike ns/op, other processes sharing the
// machine barely disturb. Benchmarks call start after their setup.
type cpuMeter struct{ t0 time.Duration }

func (m *cpuMeter) start() { m.t0 = cpuNow() }

func (m *cpuMeter) report(b *testing.B) {
	if b.N > 0 && m.t0 > 0 {
		b.ReportMetric(float64(cpuNow()-m.t0)/float64(b.N), "cpu-ns/op")
	}
}

// benchOrder returns a new order with one new authorization of three
// challenges.
func benchOrder(accountID acme.AccountID, i int, status acme.Status) (*acme.Order, []*acme.Authorization) {
	now := time.Now()
	az := &acme.Authorization{
		ID: acme.AuthzID(fmt.Sprintf("authz-%d", i)), AccountID: accountID, Status: acme.StatusPending,
		Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: fmt.Sprintf("n%d.example.com", i)},
		Expires:    now.Add(time.Hour), CreatedAt: now,
	}
	for j, typ := range []acme.ChallengeType{acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01} {
		az.Challenges = append(az.Challenges, &acme.Challenge{
			ID: acme.ChallengeID(fmt.Sprintf("chall-%d-%d", i, j)), Type: typ, Token: "token", Status: acme.StatusPending, UpdatedAt: now,
		})
	}
	o := &acme.Order{
		ID: acme.OrderID(fmt.Sprintf("order-%d", i)), AccountID: accountID, Status: status,
		Identifiers: []acme.Identifier{az.Identifier}, AuthzIDs: []acme.AuthzID{az.ID},
		Expires: now.Add(time.Hour), CreatedAt: now,
	}
	return o, []*acme.Authorization{az}
}

// BenchmarkFinalizeOrder measures the latency of issuing: one transaction
// that updates an order and inserts a certificate of about 2 KB.
func BenchmarkFinalizeOrder(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+mode, func(b *testing.B) {
			s, a := benchStore(b, mode)
			ctx := b.Context()
			der := make([]byte, 1500)
			chain := make([]byte, 4000)
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				o, azs := benchOrder(a.ID, i, acme.StatusProcessing)
				if err := s.CreateOrder(ctx, o, azs); err != nil {
					b.Fatalf("CreateOrder: %v", err)
				}
				now := time.Now()
				c := &acme.Certificate{
					Serial: fmt.Sprintf("%032x", i+1), AccountID: a.ID, OrderID: o.ID, DER: der, ChainPEM: chain,
					Names: []string{o.Identifiers[0].Value}, NotBefore: now, NotAfter: now.Add(90 * 24 * time.Hour), IssuedAt: now,
				}
				b.StartTimer()
				t0 := cpuNow()
				if err := s.FinalizeOrder(ctx, c); err != nil {
					b.Fatalf("FinalizeOrder: %v", err)
				}
				cpu += cpuNow() - t0
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkCreateOrder measures the latency of creating an order with one
// new authorization and its three challenges.
func BenchmarkCreateOrder(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+mode, func(b *testing.B) {
			s, a := benchStore(b, mode)
			ctx := b.Context()
			var cpu cpuMeter
			cpu.start()
			for i := 0; b.Loop(); i++ {
				o, azs := benchOrder(a.ID, i, acme.StatusPending)
				if err := s.CreateOrder(ctx, o, azs); err != nil {
					b.Fatalf("CreateOrder: %v", err)
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkUpdateAuthzParallel measures compare-and-set updates issued
// from many goroutines, which the single writer serializes: each writes
// one challenge with its authorization, as a validation does.
func BenchmarkUpdateAuthzParallel(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+mode, func(b *testing.B) {
			s, a := benchStore(b, mode)
			ctx := b.Context()
			const orders = 64
			for i := range orders {
				o, azs := benchOrder(a.ID, i, acme.StatusPending)
				if err := s.CreateOrder(ctx, o, azs); err != nil {
					b.Fatalf("CreateOrder: %v", err)
				}
			}
			var cpu cpuMeter
			cpu.start()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				az, err := s.GetAuthz(ctx, "authz-0")
				if err != nil {
					b.Errorf("GetAuthz: %v", err)
					return
				}
				az.Challenges = az.Challenges[:1]
				for pb.Next() {
					az.Challenges[0].UpdatedAt = time.Now()
					// Same status both ways, so every call's CAS succeeds.
					if err := s.UpdateAuthz(ctx, az, acme.StatusPending); err != nil {
						b.Errorf("UpdateAuthz: %v", err)
						return
					}
				}
			})
			cpu.report(b)
		})
	}
}

// BenchmarkGetOrderParallel measures reads from the reader pool.
func BenchmarkGetOrderParallel(b *testing.B) {
	s, a := benchStore(b, "FULL")
	ctx := b.Context()
	const orders = 256
	for i := range orders {
		o, azs := benchOrder(a.ID, i, acme.StatusPending)
		if err := s.CreateOrder(ctx, o, azs); err != nil {
			b.Fatalf("CreateOrder: %v", err)
		}
	}
	var cpu cpuMeter
	cpu.start()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			if _, err := s.GetOrder(ctx, acme.OrderID(fmt.Sprintf("order-%d", i%orders))); err != nil {
				b.Errorf("GetOrder: %v", err)
				return
			}
		}
	})
	cpu.report(b)
}

// BenchmarkIssueParallel measures the write path under concurrency, as a
// loaded server drives it: 8 goroutines each create an order (one new
// authorization of three challenges) and finalize it, with the writer at
// synchronous=FULL.
func BenchmarkIssueParallel(b *testing.B) {
	s, a := benchStore(b, "FULL")
	ctx := b.Context()
	der := make([]byte, 1500)
	chain := make([]byte, 4000)
	var next atomic.Int64
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	var cpu cpuMeter
	cpu.start()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1))
			o, azs := benchOrder(a.ID, i, acme.StatusProcessing)
			if err := s.CreateOrder(ctx, o, azs); err != nil {
				b.Errorf("CreateOrder: %v", err)
				return
			}
			now := time.Now()
			c := &acme.Certificate{
				Serial: fmt.Sprintf("%032x", i), AccountID: a.ID, OrderID: o.ID, DER: der, ChainPEM: chain,
				Names: []string{o.Identifiers[0].Value}, NotBefore: now, NotAfter: now.Add(90 * 24 * time.Hour), IssuedAt: now,
			}
			if err := s.FinalizeOrder(ctx, c); err != nil {
				b.Errorf("FinalizeOrder: %v", err)
				return
			}
		}
	})
	cpu.report(b)
}

// BenchmarkGetAuthzParallel measures reading an authorization with its
// three challenges from the reader pool.
func BenchmarkGetAuthzParallel(b *testing.B) {
	s, a := benchStore(b, "FULL")
	ctx := b.Context()
	const orders = 256
	for i := range orders {
		o, azs := benchOrder(a.ID, i, acme.StatusPending)
		if err := s.CreateOrder(ctx, o, azs); err != nil {
			b.Fatalf("CreateOrder: %v", err)
		}
	}
	var cpu cpuMeter
	cpu.start()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			az, err := s.GetAuthz(ctx, acme.AuthzID(fmt.Sprintf("authz-%d", i%orders)))
			if err != nil {
				b.Errorf("GetAuthz: %v", err)
				return
			}
			if len(az.Challenges) != 3 {
				b.Errorf("GetAuthz: %d challenges, want 3", len(az.Challenges))
				return
			}
		}
	})
	cpu.report(b)
}

// BenchmarkGetAccountParallel measures reading an account from the reader
// pool.
func BenchmarkGetAccountParallel(b *testing.B) {
	s, a := benchStore(b, "FULL")
	ctx := b.Context()
	var cpu cpuMeter
	cpu.start()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.GetAccount(ctx, a.ID); err != nil {
				b.Errorf("GetAccount: %v", err)
				return
			}
		}
	})
	cpu.report(b)
}
