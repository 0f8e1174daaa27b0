// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// gatedSource is a RateLimitSource whose clock can be made to stop, which
// holds the Apply reading it inside its transaction, or to panic.
type gatedSource struct {
	*RateLimitSource
	clock   *sourcetest.Clock
	gate    atomic.Pointer[chan struct{}] // the next reading waits for it to close
	entered chan struct{}                 // receives when a reading stops at the gate
	panics  atomic.Int64                  // the number of readings to come before one panics; 0: none
}

func newGatedSource(t *testing.T) *gatedSource {
	t.Helper()
	g := &gatedSource{clock: sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), entered: make(chan struct{}, 1)}
	now := func() time.Time {
		if p := g.panics.Load(); p > 0 && g.panics.Add(-1) == 0 {
			panic("clock failure")
		}
		if ch := g.gate.Load(); ch != nil && g.gate.CompareAndSwap(ch, nil) {
			g.entered <- struct{}{}
			<-*ch
		}
		return g.clock.Now()
	}
	g.RateLimitSource = openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), now)
	return g
}

// hold makes the next clock reading stop, and returns the function that
// releases it.
func (g *gatedSource) hold() (release func()) {
	ch := make(chan struct{})
	g.gate.Store(&ch)
	return func() { close(ch) }
}

// waitQueued waits until n batches are queued.
func (g *gatedSource) waitQueued(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		g.mu.Lock()
		got := len(g.queue)
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d batches queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// applyAsync applies ops in a goroutine and returns where its outcome will
// arrive.
func (g *gatedSource) applyAsync(ctx context.Context, ops ...ratelimit.Op) <-chan error {
	done := make(chan error, 1)
	go func() {
		res, err := g.Apply(ctx, &ratelimit.Batch{Ops: ops})
		if err == nil && !res.Committed {
			err = errors.New("not committed")
		}
		done <- err
	}()
	return done
}

func spendOp(key string) ratelimit.Op {
	return ratelimit.Op{Kind: ratelimit.OpSpend, Key: key, Limit: rlOrder, Cost: 1}
}

// TestRateLimitGroupCommit queues batches behind a transaction, so that
// they run as one group, and checks that one failing batch fails alone and
// that a batch cancelled while queued is dropped.
func TestRateLimitGroupCommit(t *testing.T) {
	g := newGatedSource(t)
	ctx := t.Context()
	// The writer is one long-lived connection, so the temporary trigger
	// stays in force: adding member "boom" fails.
	if _, err := g.w.ExecContext(ctx, `CREATE TEMP TRIGGER boom BEFORE INSERT ON buckets
		WHEN NEW.member = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}

	release := g.hold()
	leader := g.applyAsync(ctx, spendOp("order-creation:leader"))
	<-g.entered // the leader is inside its transaction
	a := g.applyAsync(ctx, spendOp("order-creation:a"))
	g.waitQueued(t, 1)
	b := g.applyAsync(ctx, spendOp("order-creation:b"),
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: "duplicate-certificate:b:ff", Limit: rlDup, Member: "boom"})
	g.waitQueued(t, 2)
	cctx, cancel := context.WithCancel(ctx)
	c := g.applyAsync(cctx, spendOp("order-creation:c"))
	g.waitQueued(t, 3)
	d := g.applyAsync(ctx, spendOp("order-creation:d"))
	g.waitQueued(t, 4)
	cancel()
	if err := <-c; !errors.Is(err, context.Canceled) {
		t.Errorf("batch cancelled in the queue: %v, want context.Canceled", err)
	}
	g.waitQueued(t, 3)
	release()

	for name, ch := range map[string]<-chan error{"leader": leader, "a": a, "d": d} {
		if err := <-ch; err != nil {
			t.Errorf("batch %s: %v, want committed", name, err)
		}
	}
	if err := <-b; err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failing batch: %v, want the trigger's error", err)
	}
	snap, err := g.Get(ctx, []string{"order-creation:leader", "order-creation:a", "order-creation:b", "order-creation:c", "order-creation:d"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"order-creation:leader", "order-creation:a", "order-creation:d"} {
		if _, ok := snap.Buckets[k]; !ok {
			t.Errorf("%s was not stored", k)
		}
	}
	for _, k := range []string{"order-creation:b", "order-creation:c"} {
		if _, ok := snap.Buckets[k]; ok {
			t.Errorf("%s was stored by a batch that failed", k)
		}
	}
}

// TestRateLimitGroupPanic checks that a panic while applying a group fails
// every batch of the group, including those already applied in its
// transaction, and releases the lead.
func TestRateLimitGroupPanic(t *testing.T) {
	g := newGatedSource(t)
	ctx := t.Context()
	release := g.hold()
	leader := g.applyAsync(ctx, spendOp("order-creation:leader"))
	<-g.entered
	var (
		wg       sync.WaitGroup
		panicked any
	)
	wg.Go(func() {
		defer func() { panicked = recover() }()
		g.Apply(ctx, &ratelimit.Batch{Ops: []ratelimit.Op{spendOp("order-creation:a")}})
	})
	g.waitQueued(t, 1)
	b := g.applyAsync(ctx, spendOp("order-creation:b"))
	g.waitQueued(t, 2)
	c := g.applyAsync(ctx, spendOp("order-creation:c"))
	g.waitQueued(t, 3)
	// The leader has read the clock already; a, b and c run as a group
	// and c's reading, the third, panics after b was applied in the
	// transaction.
	g.panics.Store(3)
	release()

	if err := <-leader; err != nil {
		t.Errorf("leader: %v", err)
	}
	wg.Wait()
	if got := panicked; got != "clock failure" {
		t.Errorf("the batch leading the group recovered %v, want the clock's panic", got)
	}
	for name, ch := range map[string]<-chan error{"b": b, "c": c} {
		if err := <-ch; !errors.Is(err, errLeaderPanicked) {
			t.Errorf("batch %s of the group: %v, want errLeaderPanicked", name, err)
		}
	}
	snap, err := g.Get(ctx, []string{"order-creation:a", "order-creation:b", "order-creation:c"})
	if err != nil || len(snap.Buckets) != 0 {
		t.Errorf("after the panic: Get = %v, %v; want nothing stored by the group", snap.Buckets, err)
	}
	if err := <-g.applyAsync(ctx, spendOp("order-creation:after")); err != nil {
		t.Errorf("Apply after the panic: %v", err)
	}
}
