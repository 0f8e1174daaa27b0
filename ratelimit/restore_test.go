// SPDX-License-Identifier: Apache-2.0

package ratelimit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// lossy is a MemorySource that reports ErrStateLost until restored, as a
// Redis with its marker missing does.
type lossy struct {
	*ratelimit.MemorySource
	whole atomic.Bool
}

func (l *lossy) Apply(ctx context.Context, b *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	if !l.whole.Load() {
		return nil, ratelimit.ErrStateLost
	}
	return l.MemorySource.Apply(ctx, b)
}

// TestRecoveringWaitsForAnotherReplica: while another replica holds the
// restore lock (Restore fails with ErrStateLost), Apply polls until that
// replica has restored, and decides then; it does not give up at once.
func TestRecoveringWaitsForAnotherReplica(t *testing.T) {
	src := &lossy{MemorySource: ratelimit.NewMemorySource(nil)}
	other := &lockedOut{lossy: src}
	rec := ratelimit.NewRecovering(other, func(context.Context, time.Time) ([]ratelimit.CountBucket, error) { return nil, nil }, nil)
	go func() {
		time.Sleep(100 * time.Millisecond)
		src.whole.Store(true) // the other replica has finished
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	b := &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpSpend, Key: "order-creation:1", Limit: ratelimit.Limit{Period: time.Hour, Count: 10, Burst: 10}, Cost: 1}}}
	if res, err := rec.Apply(ctx, b); err != nil || !res.Committed {
		t.Fatalf("apply while another replica restores: %+v, %v; want a decision once it has", res, err)
	}
}

// lockedOut is a lossy source whose Restore always finds another
// replica's lock.
type lockedOut struct{ *lossy }

func (l *lockedOut) Restore(context.Context, []ratelimit.CountBucket) error {
	return ratelimit.ErrStateLost
}

func (l *lossy) Restore(ctx context.Context, bs []ratelimit.CountBucket) error {
	if err := l.MemorySource.Restore(ctx, bs); err != nil {
		return err
	}
	l.whole.Store(true)
	return nil
}

// TestRecoveringRebuildsBeforeDeciding: the first Apply after a loss
// waits for the rebuild from the store's records and is decided on them:
// a name set with 5 live certificates in the store is denied a sixth.
func TestRecoveringRebuildsBeforeDeciding(t *testing.T) {
	src := &lossy{MemorySource: ratelimit.NewMemorySource(nil)}
	dup := ratelimit.Limit{Max: 5, Window: 168 * time.Hour}
	key := ratelimit.BucketKey(ratelimit.DuplicateCertificate, "1:set")
	var loads atomic.Int32
	load := func(_ context.Context, now time.Time) ([]ratelimit.CountBucket, error) {
		loads.Add(1)
		m := map[string]int64{}
		for i, id := range []string{"o1", "o2", "o3", "o4", "o5"} {
			m[id] = now.Add(-time.Duration(i+1) * time.Hour).UnixMicro()
		}
		return []ratelimit.CountBucket{{Key: key, Window: dup.WindowMicros(), Members: m}}, nil
	}
	rec := ratelimit.NewRecovering(src, load, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	res, err := rec.Apply(ctx, &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpAdd, Key: key, Limit: dup, Member: "o6"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed {
		t.Error("a sixth certificate was admitted after the rebuild of five")
	}
	if loads.Load() != 1 || rec.Rebuilds() != 1 {
		t.Errorf("loads %d, rebuilds %d, want 1 and 1", loads.Load(), rec.Rebuilds())
	}
}

// TestRecoveringFailedLoad: when the store cannot be read, Apply fails
// when its context ends (on-backend-error decides), and the next Apply
// tries again.
func TestRecoveringFailedLoad(t *testing.T) {
	src := &lossy{MemorySource: ratelimit.NewMemorySource(nil)}
	var fail atomic.Bool
	fail.Store(true)
	load := func(context.Context, time.Time) ([]ratelimit.CountBucket, error) {
		if fail.Load() {
			return nil, errors.New("store down")
		}
		return nil, nil
	}
	rec := ratelimit.NewRecovering(src, load, nil)
	b := &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpSpend, Key: "order-creation:1", Limit: ratelimit.Limit{Period: time.Hour, Count: 10, Burst: 10}, Cost: 1}}}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := rec.Apply(ctx, b); !errors.Is(err, ratelimit.ErrStateLost) {
		t.Fatalf("apply with the store down: %v, want ErrStateLost", err)
	}
	fail.Store(false)
	if res, err := rec.Apply(t.Context(), b); err != nil || !res.Committed {
		t.Fatalf("apply once the store answers: %+v, %v", res, err)
	}
}
