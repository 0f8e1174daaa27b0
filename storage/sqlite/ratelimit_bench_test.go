// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// BenchmarkSQLiteNewOrderBatch measures one new-order Spend through the
// Limiter on a RateLimitSource, in the shape of ratelimit's
// BenchmarkMemorySpendOrderBatch: order-creation, a 3-name san-budget, the
// duplicate-certificate and failed-validation checks, and three
// pending-authorization adds. Accounts rotate over 10,000 and the fake clock
// moves a minute per order, so every batch finds refilled buckets, is
// admitted and writes (the expensive path), and the previous visits'
// pending authorizations have expired (Eval prunes them; their rows wait
// for Sweep, which the benchmark does not run). The batches/s metric
// is the throughput asked of it (at least 5,000/s); cpu-µs/op is the CPU
// time of the whole process per batch.
func BenchmarkSQLiteNewOrderBatch(b *testing.B) {
	sourcetest.BenchOrderBatches(b, func(b *testing.B) (*ratelimit.Limiter, *sourcetest.Clock) {
		clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		src := openRateLimitAt(b, filepath.Join(b.TempDir(), "ratelimit.db"), clock.Now)
		l, err := ratelimit.New(ratelimit.DefaultPolicy(), src, clock.Now)
		if err != nil {
			b.Fatal(err)
		}
		return l, clock
	}, cpuNow)
}

// BenchmarkSQLiteSweepChunk measures one full chunk of Sweep, which is how
// long the sweeper holds the write lock at a time (it should stay under
// ~10 ms): SweepChunk idle rate buckets examined and deleted, or SweepChunk
// expired members deleted, in one transaction.
func BenchmarkSQLiteSweepChunk(b *testing.B) {
	for _, kind := range []string{"rate", "members"} {
		b.Run(kind, func(b *testing.B) {
			clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s := openRateLimitAt(b, filepath.Join(b.TempDir(), "ratelimit.db"), clock.Now)
			ctx := b.Context()
			rate := ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}
			dup := ratelimit.Limit{Max: 5, Window: time.Hour}
			i := 0
			for b.Loop() {
				b.StopTimer()
				ops := make([]ratelimit.Op, SweepChunk)
				for j := range ops {
					i++
					if kind == "rate" {
						ops[j] = ratelimit.Op{Kind: ratelimit.OpSpend, Key: fmt.Sprintf("order-creation:acct-%d", i), Limit: rate, Cost: 1}
					} else {
						ops[j] = ratelimit.Op{Kind: ratelimit.OpAdd, Key: fmt.Sprintf("duplicate-certificate:acct-%d:ff", i), Limit: dup, Member: "serial"}
					}
				}
				if res, err := s.Apply(ctx, &ratelimit.Batch{Ops: ops}); err != nil || !res.Committed {
					b.Fatalf("Apply = %v, %v", res, err)
				}
				clock.Advance(2 * time.Hour)
				b.StartTimer()
				var n int
				err := s.sweepTx(ctx, func(tx *sql.Tx, now int64) (err error) {
					if kind == "rate" {
						n, _, _, err = sweepRates(ctx, tx, now, "", SweepChunk)
						return err
					}
					r, err := tx.ExecContext(ctx, sweepMembersSQL, now, SweepChunk)
					if err == nil {
						d, _ := r.RowsAffected()
						n = int(d)
					}
					return err
				})
				if err != nil || n != SweepChunk {
					b.Fatalf("sweep chunk = %d, %v; want %d", n, err, SweepChunk)
				}
			}
		})
	}
}
