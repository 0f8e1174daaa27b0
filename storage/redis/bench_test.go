package redis_test

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// benchAccount holds one account's precomputed bucket keys.
type benchAccount struct {
	id, dup string
	failed  [3]string
}

// benchAccounts is enough accounts that every batch of a run is admitted:
// at 5 orders per account (order-creation's burst) this covers 500,000
// batches, far more than one second of the benchmark.
var benchAccounts = sync.OnceValue(func() []benchAccount {
	names := []string{"a.example.com", "b.example.com", "c.example.com"}
	accts := make([]benchAccount, 100_000)
	for i := range accts {
		id := "acct-" + strconv.Itoa(i)
		accts[i] = benchAccount{id: id, dup: ratelimit.FQDNSetKey(id, names)}
		for j, n := range names {
			accts[i].failed[j] = ratelimit.FailedValidationKey(id, n)
		}
	}
	return accts
})

// BenchmarkRedisNewOrderBatch measures one new-order Spend through the
// Limiter on Redis, the batch of ratelimit's BenchmarkMemorySpendOrderBatch:
// order-creation, a 3-name san-budget, the duplicate-certificate and three
// failed-validation checks, and three pending-authorization adds — nine
// buckets, one decision, one EVALSHA. It runs the production path (Redis
// TIME, default limits) at 16 concurrent callers, and every batch must be
// admitted (the expensive path: the script writes three keys).
func BenchmarkRedisNewOrderBatch(b *testing.B) {
	c := testClient(b)
	accts := benchAccounts()
	const concurrency = 16
	src := newSource(b, c, nil)
	l, err := ratelimit.New(ratelimit.DefaultConfig(), src, nil)
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
		reqs := make([]ratelimit.Request, 9)
		for pb.Next() {
			i := int(seq.Add(1))
			a := &accts[i%len(accts)]
			exp := time.Now().Add(time.Hour)
			s := strconv.Itoa(i)
			reqs = append(reqs[:0],
				ratelimit.Request{Name: ratelimit.OrderCreation, Key: a.id},
				ratelimit.Request{Name: ratelimit.SANBudget, Key: a.id, Cost: 3},
				ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: a.dup, CheckOnly: true},
				ratelimit.Request{Name: ratelimit.FailedValidation, Key: a.failed[0], CheckOnly: true},
				ratelimit.Request{Name: ratelimit.FailedValidation, Key: a.failed[1], CheckOnly: true},
				ratelimit.Request{Name: ratelimit.FailedValidation, Key: a.failed[2], CheckOnly: true},
				ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-0", MemberTime: exp},
				ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-1", MemberTime: exp},
				ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-2", MemberTime: exp},
			)
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
