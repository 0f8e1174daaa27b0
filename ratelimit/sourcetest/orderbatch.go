// SPDX-License-Identifier: Apache-2.0

package sourcetest

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// OrderBatches returns the new-order batch that every backend's benchmark
// spends, so their numbers compare: order i comes from account i mod
// accounts and asks order-creation, a 3-name san-budget, the
// duplicate-certificate check, three failed-validation checks, and three
// pending-authorization adds expiring an hour after now. The accounts' keys
// are computed once, here.
func OrderBatches(accounts int) func(i int, now time.Time) []ratelimit.Request {
	names := []string{"a.example.com", "b.example.com", "c.example.com"}
	type account struct {
		id, dup string
		failed  [3]string
	}
	accts := make([]account, accounts)
	for i := range accts {
		id := "acct-" + strconv.Itoa(i)
		accts[i] = account{id: id, dup: ratelimit.FQDNSetKey(id, names)}
		for j, n := range names {
			accts[i].failed[j] = ratelimit.FailedValidationKey(id, n)
		}
	}
	return func(i int, now time.Time) []ratelimit.Request {
		a := &accts[i%accounts]
		exp := now.Add(time.Hour)
		s := strconv.Itoa(i)
		return []ratelimit.Request{
			{Name: ratelimit.OrderCreation, Key: a.id},
			{Name: ratelimit.SANBudget, Key: a.id, Cost: 3},
			{Name: ratelimit.DuplicateCertificate, Key: a.dup, CheckOnly: true},
			{Name: ratelimit.FailedValidation, Key: a.failed[0], CheckOnly: true},
			{Name: ratelimit.FailedValidation, Key: a.failed[1], CheckOnly: true},
			{Name: ratelimit.FailedValidation, Key: a.failed[2], CheckOnly: true},
			{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-0", MemberTime: exp},
			{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-1", MemberTime: exp},
			{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-2", MemberTime: exp},
		}
	}
}

// BenchOrderBatches runs the new-order Spend benchmark of a backend:
// serial, parallel (GOMAXPROCS goroutines) and parallel-16x (sixteen times
// as many, like a server with many requests in flight). newLimiter makes a
// fresh Limiter on the backend with a fake clock, which moves a minute per
// order so that every batch is admitted (the expensive path). Each reports
// batches/s; when cpu is not nil (the process's CPU time), also
// cpu-µs/op, which depends less on what else the machine runs.
func BenchOrderBatches(b *testing.B, newLimiter func(b *testing.B) (*ratelimit.Limiter, *Clock), cpu func() time.Duration) {
	batch := OrderBatches(10_000)
	for _, par := range []struct {
		name string
		p    int // 0: serial
	}{{"serial", 0}, {"parallel", 1}, {"parallel-16x", 16}} {
		b.Run(par.name, func(b *testing.B) {
			l, clock := newLimiter(b)
			ctx := b.Context()
			var seq atomic.Int64
			spend := func() {
				i := int(seq.Add(1))
				clock.Advance(time.Minute)
				d, _, err := l.Spend(ctx, batch(i, clock.Now())...)
				if err != nil || !d.Allowed {
					b.Fatalf("Spend = %+v, %v; want allowed", d, err)
				}
			}
			b.ReportAllocs()
			var c0 time.Duration
			if cpu != nil {
				c0 = cpu()
			}
			if par.p == 0 {
				for b.Loop() {
					spend()
				}
			} else {
				b.SetParallelism(par.p)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						spend()
					}
				})
			}
			if cpu != nil {
				b.ReportMetric(float64((cpu()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
		})
	}
}
