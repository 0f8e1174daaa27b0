// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// TestMatchesEval drives the Redis script and the memory source (which
// runs ratelimit.Eval) with the same random batches on the same fake clock
// and requires identical results, field by field, and identical stored
// state after every batch: the Lua port of the arithmetic must be exact.
func TestMatchesEval(t *testing.T) {
	c := testClient(t)
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			rs := newSource(t, c, clock.Now)
			ms := ratelimit.NewMemorySource(clock.Now)
			g := &opGen{rnd: rand.New(rand.NewPCG(seed, 42)), clock: clock}
			var committed, denied, never, retry, applied int
			defer func() {
				t.Logf("%d committed, %d not; %d never, %d with a retry time, %d applied ops",
					committed, denied, never, retry, applied)
			}()
			for step := range 1000 {
				clock.Advance(g.advance())
				ops := g.batch()
				want, werr := ms.Apply(t.Context(), &ratelimit.Batch{Ops: ops})
				got, gerr := rs.Apply(t.Context(), &ratelimit.Batch{Ops: ops})
				if (werr != nil) != (gerr != nil) {
					t.Fatalf("step %d: memory error %v, redis error %v\nops %+v", step, werr, gerr, ops)
				}
				if werr != nil {
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d: results differ\n ops   %+v\n redis %+v\nmemory %+v", step, ops, got, want)
				}
				g.compareState(t, step, rs, ms)
				if got.Committed {
					committed++
				} else {
					denied++
				}
				for _, r := range got.Results {
					never += btoi(r.Never)
					retry += btoi(r.RetryAfter > 0)
					applied += btoi(r.Applied)
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The generator's buckets: three rate buckets and two count buckets, one
// with a window (issue times) and one without (expiries).
var (
	rateKeys  = []string{"order-creation:a", "san-budget:a", "registered-domain:example.com"}
	windowKey = "duplicate-certificate:a:ff"
	expiryKey = "pending-authorizations:a"
	window    = time.Hour
)

// opGen makes random valid batches.
type opGen struct {
	rnd   *rand.Rand
	clock *sourcetest.Clock
}

func (g *opGen) advance() time.Duration {
	switch g.rnd.IntN(4) {
	case 0:
		return 0
	case 1:
		return time.Duration(g.rnd.IntN(1000)) * time.Microsecond
	default:
		return time.Duration(g.rnd.Int64N(int64(20 * time.Minute))).Truncate(time.Microsecond)
	}
}

// rateLimit is one of a few limits, so a bucket sometimes changes limit
// between batches (an override) and holds a TAT beyond its new capacity.
func (g *opGen) rateLimit() ratelimit.Limit {
	return []ratelimit.Limit{
		{Count: 20, Period: time.Hour, Burst: 5},
		{Count: 7, Period: time.Hour, Burst: 3},
		{Count: 1000, Period: time.Second, Burst: 10},
		{Count: 3, Period: 7 * time.Minute, Burst: 2},
	}[g.rnd.IntN(4)]
}

func (g *opGen) member() string { return fmt.Sprint("m", g.rnd.IntN(6)) }

func (g *opGen) op() ratelimit.Op {
	now := g.clock.Now().UnixMicro()
	switch g.rnd.IntN(9) {
	case 0, 1, 2:
		l := g.rateLimit()
		kind := []ratelimit.OpKind{ratelimit.OpSpend, ratelimit.OpCheck, ratelimit.OpRefund}[g.rnd.IntN(3)]
		cost := 1 + g.rnd.Int64N(l.Burst+2)
		switch {
		case kind == ratelimit.OpCheck && g.rnd.IntN(4) == 0:
			cost = 0
		case g.rnd.IntN(20) == 0:
			cost = 1 << 62 // clamped on the way to Lua
		}
		return ratelimit.Op{Kind: kind, Key: rateKeys[g.rnd.IntN(len(rateKeys))], Limit: l, Cost: cost}
	case 3, 4, 5:
		op := ratelimit.Op{Key: windowKey, Limit: ratelimit.Limit{Max: 2 + g.rnd.Int64N(3), Window: window}, Member: g.member()}
		op.Kind = []ratelimit.OpKind{ratelimit.OpAdd, ratelimit.OpAdd, ratelimit.OpCount, ratelimit.OpRemove}[g.rnd.IntN(4)]
		switch g.rnd.IntN(4) {
		case 0:
			op.MemberTime = now - g.rnd.Int64N(2*window.Microseconds())
		case 1:
			if op.Kind == ratelimit.OpCount {
				op.Member = ""
			}
		}
		return op
	default:
		op := ratelimit.Op{Key: expiryKey, Limit: ratelimit.Limit{Max: 2 + g.rnd.Int64N(3)}, Member: g.member()}
		op.Kind = []ratelimit.OpKind{ratelimit.OpAdd, ratelimit.OpAdd, ratelimit.OpCount, ratelimit.OpRemove}[g.rnd.IntN(4)]
		op.MemberTime = now + g.rnd.Int64N(int64(time.Hour/time.Microsecond)) - int64(10*time.Minute/time.Microsecond)
		if op.Kind == ratelimit.OpCount && g.rnd.IntN(3) == 0 {
			op.Member, op.MemberTime = "", 0
		}
		return op
	}
}

func (g *opGen) batch() []ratelimit.Op {
	ops := make([]ratelimit.Op, 1+g.rnd.IntN(6))
	for i := range ops {
		ops[i] = g.op()
	}
	return ops
}

// compareState compares both sources' buckets, pruning Redis's members
// (which Get returns as stored) with the bucket's window.
func (g *opGen) compareState(t *testing.T, step int, rs, ms ratelimit.Source) {
	t.Helper()
	keys := append([]string{windowKey, expiryKey}, rateKeys...)
	got, err := rs.Get(t.Context(), keys)
	if err != nil {
		t.Fatalf("step %d: redis Get: %v", step, err)
	}
	want, err := ms.Get(t.Context(), keys)
	if err != nil {
		t.Fatalf("step %d: memory Get: %v", step, err)
	}
	for k, b := range got.Buckets {
		if b.Members == nil {
			continue
		}
		w := int64(0)
		if k == windowKey {
			w = window.Microseconds()
		}
		maps.DeleteFunc(b.Members, func(_ string, ts int64) bool { return ts <= got.Now-w })
		if len(b.Members) == 0 {
			delete(got.Buckets, k)
		}
	}
	if got.Now != want.Now || !reflect.DeepEqual(got.Buckets, want.Buckets) {
		t.Fatalf("step %d: stored state differs\n redis %+v\nmemory %+v", step, got, want)
	}
}

// TestCorruptState checks that keys the source did not write as buckets
// are errors, not decisions, and that the failing batch writes nothing
// (Redis does not roll back a script that fails half way: the script does
// every read before its first write).
func TestCorruptState(t *testing.T) {
	c := testClient(t)
	src := newSource(t, c, nil)
	rate := ratelimit.Limit{Count: 1, Period: time.Hour, Burst: 5}
	fresh := ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:fresh", Limit: rate, Cost: 1}
	c.Set(t.Context(), src.Key("order-creation:garbage"), "not a number", time.Minute)
	c.ZAdd(t.Context(), src.Key("order-creation:zset"), goredis.Z{Score: 1, Member: "m"})
	c.Set(t.Context(), src.Key("pending-authorizations:string"), "1", time.Minute)
	c.RPush(t.Context(), src.Key("order-creation:list"), "x")
	tests := []struct {
		op   ratelimit.Op
		want string
	}{
		{ratelimit.Op{Kind: ratelimit.OpCheck, Key: "order-creation:garbage", Limit: rate}, "corrupt rate bucket"},
		{ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:zset", Limit: rate, Cost: 1}, "WRONGTYPE"},
		{ratelimit.Op{Kind: ratelimit.OpCount, Key: "pending-authorizations:string", Limit: ratelimit.Limit{Max: 1}}, "WRONGTYPE"},
	}
	for _, tt := range tests {
		_, err := src.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{fresh, tt.op}})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "redis: ratelimit: apply: ") {
			t.Errorf("%s: Apply = %v, want a redis: ratelimit: apply: error mentioning %q", tt.op.Key, err, tt.want)
		}
	}
	if n := c.Exists(t.Context(), src.Key(fresh.Key)).Val(); n != 0 {
		t.Error("a failed batch wrote its first bucket")
	}
	if _, err := src.Get(t.Context(), []string{"order-creation:list"}); err == nil || !strings.Contains(err.Error(), "not a bucket") {
		t.Errorf("Get of a list = %v, want an error", err)
	}
}
