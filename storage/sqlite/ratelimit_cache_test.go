// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// TestRateLimitCacheMatchesFile runs random batches (every kind of op),
// alone and in groups, with Sweep, Reset and Restore between them and the
// clock moving, and after each step compares every bucket the cache holds
// with the file's rows: a batch that read the cache must decide and write
// exactly as one that read the file.
func TestRateLimitCacheMatchesFile(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), clock.Now)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(40, 2026))
	rate := []string{"order-creation:a", "order-creation:b", "san-budget:a"}
	count := []string{"duplicate-certificate:a:ff", "pending-authorizations:a", "certificates-per-domain:example.com"}
	wide := ratelimit.Limit{Max: 64, Window: 30 * time.Minute} // many members, so that a batch prunes them
	randOp := func() ratelimit.Op {
		if rng.IntN(2) == 0 {
			kinds := []ratelimit.OpKind{ratelimit.OpSpend, ratelimit.OpSpend, ratelimit.OpCheck, ratelimit.OpRefund}
			return ratelimit.Op{Kind: kinds[rng.IntN(len(kinds))], Key: rate[rng.IntN(len(rate))], Limit: rlOrder, Cost: 1 + rng.Int64N(3)}
		}
		kinds := []ratelimit.OpKind{ratelimit.OpAdd, ratelimit.OpAdd, ratelimit.OpCount, ratelimit.OpRemove}
		op := ratelimit.Op{Kind: kinds[rng.IntN(len(kinds))], Key: count[rng.IntN(len(count))], Limit: wide, Member: fmt.Sprintf("m%d", rng.IntN(200))}
		if rng.IntN(4) == 0 {
			op.MemberTime = clock.Now().Add(-time.Duration(rng.IntN(40)) * time.Minute).UnixMicro()
		}
		return op
	}
	randBatch := func() []ratelimit.Op {
		ops := make([]ratelimit.Op, 1+rng.IntN(4))
		for i := range ops {
			ops[i] = randOp()
		}
		return ops
	}
	checked, denied, fromCache := 0, 0, 0
	for step := range 1500 {
		switch n := rng.IntN(40); {
		case n < 5: // checks only, answered from the cache and from the file
			ops := randBatch()
			for i := range ops {
				ops[i].Kind = ratelimit.OpCount
				if ops[i].Limit.Kind() == ratelimit.KindRate {
					ops[i].Kind = ratelimit.OpCheck
				}
			}
			cached, ok := s.checkCached(ops)
			if !ok {
				break
			}
			fromCache++
			s.cache.clear()
			q := &applyReq{ops: ops}
			s.runGroup([]*applyReq{q})
			if q.err != nil {
				t.Fatalf("step %d: checks: %v", step, q.err)
			}
			if !reflect.DeepEqual(cached, q.res) {
				t.Fatalf("step %d: checks %+v: from the cache %+v, from the file %+v", step, ops, *cached, *q.res)
			}
		case n == 0:
			if _, err := s.Sweep(ctx); err != nil {
				t.Fatalf("step %d: Sweep: %v", step, err)
			}
		case n == 1:
			if err := s.Reset(ctx, append(rate, count...)[rng.IntN(len(rate)+len(count))]); err != nil {
				t.Fatalf("step %d: Reset: %v", step, err)
			}
		case n == 2:
			b := ratelimit.CountBucket{Key: count[0], Window: wide.WindowMicros(), Members: map[string]int64{"r1": clock.Now().UnixMicro()}}
			if err := s.Restore(ctx, []ratelimit.CountBucket{b}); err != nil {
				t.Fatalf("step %d: Restore: %v", step, err)
			}
		case n < 14: // a group of batches in one transaction
			group := make([]*applyReq, 2+rng.IntN(4))
			for i := range group {
				group[i] = &applyReq{ops: randBatch()}
			}
			s.runGroup(group)
			for i, q := range group {
				if q.err != nil {
					t.Fatalf("step %d: group batch %d: %v", step, i, q.err)
				}
			}
		default:
			res, err := s.Apply(ctx, &ratelimit.Batch{Ops: randBatch()})
			if err != nil {
				t.Fatalf("step %d: Apply: %v", step, err)
			}
			if !res.Committed {
				denied++
			}
		}
		checked += checkCache(t, s, step)
		clock.Advance(time.Duration(rng.IntN(180)) * time.Second)
	}
	if checked < 1000 || denied == 0 || fromCache < 20 {
		t.Errorf("the cache was compared %d times, %d batches were denied and %d answered from the cache: the walk exercised too little", checked, denied, fromCache)
	}
}

// checkCache compares every bucket in s's cache with the rows in the file,
// returning how many it compared.
func checkCache(t *testing.T, s *RateLimitSource, step int) int {
	t.Helper()
	s.cache.mu.Lock()
	cached := maps.Clone(s.cache.m)
	s.cache.mu.Unlock()
	for k, want := range cached {
		got, err := readRows(t.Context(), s.r, k)
		if err != nil {
			t.Fatalf("step %d: reading %s: %v", step, k, err)
		}
		if got.hasTAT != want.hasTAT || got.tat != want.tat || !maps.Equal(got.members, want.members) || !maps.Equal(got.expires, want.expires) {
			t.Fatalf("step %d: bucket %s: cache %+v, file %+v", step, k, *want, *got)
		}
	}
	return len(cached)
}

// readRows reads the rows stored under skey, with the load of a batch
// run in a read transaction on db.
func readRows(ctx context.Context, db *sql.DB, skey string) (*storedRows, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	loaded, err := load(ctx, tx, nil, []*keyState{{skey: skey}})
	if err != nil {
		return nil, err
	}
	return loaded[0], nil
}

// TestRateLimitLocked: a second open of the file is refused while the
// first holds it (the cache is true only while one process writes), and
// succeeds once it is closed.
func TestRateLimitLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratelimit.db")
	s, err := OpenRateLimit(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRateLimit(t.Context(), path, nil); err == nil {
		t.Fatal("a second OpenRateLimit of an open file succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openRateLimitAt(t, path, nil)
}

// TestRateLimitShared: two sources opened with OpenRateLimitShared on one
// file (two replicas sharing a data directory) decide as one: each sees
// the other's spends, which a cached bucket would hide.
func TestRateLimitShared(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "ratelimit.db")
	var srcs [2]*RateLimitSource
	for i := range srcs {
		s, err := OpenRateLimitShared(t.Context(), path, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		srcs[i] = s
	}
	spend := func(s *RateLimitSource, cost int64) bool {
		res, err := s.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: rlOrder, Cost: cost}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Committed
	}
	// The burst is 5: 3 on one, 2 on the other, and then neither has one.
	if !spend(srcs[0], 3) || !spend(srcs[1], 2) {
		t.Fatal("spends within the burst refused")
	}
	for i, s := range srcs {
		if spend(s, 1) {
			t.Errorf("source %d admitted a sixth token of a burst of 5", i)
		}
	}
}
