// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// benchAccounts is enough accounts that every batch of a run is admitted:
// at 5 orders per account (order-creation's burst) this covers 500,000
// batches, far more than one second of the benchmark.
const benchAccounts = 100_000

// BenchmarkRedisNewOrderBatch measures one new-order Spend through the
// Limiter on Redis, the batch of ratelimit's BenchmarkMemorySpendOrderBatch:
// order-creation, a 3-name san-budget, the duplicate-certificate and three
// failed-validation checks, and three pending-authorization adds — nine
// buckets, one decision, one EVALSHA. It runs the production path (Redis
// TIME, default limits) at 16 concurrent callers, and every batch must be
// admitted (the expensive path: the script writes three keys).
func BenchmarkRedisNewOrderBatch(b *testing.B) {
	c := testClient(b)
	batch := sourcetest.OrderBatches(benchAccounts)
	const concurrency = 16
	src := newSource(b, c, nil)
	l, err := ratelimit.New(ratelimit.DefaultPolicy(), src, nil)
	if err != nil {
		b.Fatal(err)
	}
	var seq, denied atomic.Int64
	var failed atomic.Pointer[error]
	b.SetParallelism(max(1, concurrency/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := b.Context()
		for pb.Next() {
			i := int(seq.Add(1))
			reqs := batch(i, time.Now())
			d, _, err := l.Spend(ctx, reqs...)
			switch {
			case err != nil:
				failed.Store(&err)
				return
			case !d.Allowed:
				denied.Add(1)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	if err := failed.Load(); err != nil {
		b.Fatalf("Spend: %v", *err)
	}
	if n := denied.Load(); n > 0 {
		b.Fatalf("%d of %d batches were denied; every batch must be admitted", n, b.N)
	}
}
