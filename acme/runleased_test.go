// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-pki/weir/acme"
)

// leaseTable is the named leases of a shared store, in memory, with the
// semantics the storagetest suite checks of every real store (whose
// SQLite writer, which recycles its channels across calls, cannot run in
// a synctest bubble).
type leaseTable struct {
	acme.Store
	mu     sync.Mutex
	leases map[string]heldLease
}

type heldLease struct {
	owner string
	until time.Time
}

func (l *leaseTable) TryLease(_ context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.leases[name]; ok && now.Before(h.until) && h.owner != owner {
		return false, nil
	}
	l.leases[name] = heldLease{owner, now.Add(ttl)}
	return true, nil
}

func (l *leaseTable) ReleaseLease(_ context.Context, name, owner string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leases[name].owner == owner {
		delete(l.leases, name)
	}
	return nil
}

// mortal is a replica's view of the shared store that can die: once dead,
// it can release nothing, as a killed process releases nothing.
type mortal struct {
	acme.Store
	dead atomic.Bool
}

func (m *mortal) ReleaseLease(ctx context.Context, name, owner string) error {
	if m.dead.Load() {
		return errors.New("the process is gone")
	}
	return m.Store.ReleaseLease(ctx, name, owner)
}

// runLog records which replica ran a job at which minute of the bubble.
type runLog struct {
	mu   sync.Mutex
	t0   time.Time
	runs []string // "owner@minute"
}

func (l *runLog) job(owner string) func(context.Context) error {
	return func(context.Context) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.runs = append(l.runs, fmt.Sprintf("%s@%d", owner, int(time.Since(l.t0)/time.Minute)))
		return nil
	}
}

// since returns the runs recorded after the first n.
func (l *runLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.runs[n:]...)
}

func (l *runLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs)
}

// TestRunLeased: of replicas ticking together, exactly one runs a leased
// job at each tick, always the same one. When that one dies without a
// word, its lease (two intervals) ends and another takes over at the
// first tick after that; when one stops cleanly, it releases the lease
// and another takes over at the next tick. Time is the synctest bubble's.
func TestRunLeased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &leaseTable{leases: map[string]heldLease{}}
		log := &runLog{t0: time.Now()}
		type node struct {
			name  string
			store *mortal
			svc   *acme.Service
			stop  context.CancelFunc
			done  chan error
		}
		launch := func(name string) *node {
			n := &node{name: name, store: &mortal{Store: st}, done: make(chan error, 1)}
			n.svc = replica(t, n.store, name, nil, &recorder{})
			ctx, cancel := context.WithCancel(context.Background())
			n.stop = cancel
			go func() { n.done <- n.svc.RunLeased(ctx, "job", time.Minute, log.job(name)) }()
			return n
		}
		halt := func(n *node) {
			n.stop()
			if err := <-n.done; err != nil {
				t.Errorf("RunLeased(%s): %v", n.name, err)
			}
		}
		nodes := map[string]*node{"a": launch("a"), "b": launch("b"), "c": launch("c")}
		defer func() {
			for _, n := range nodes {
				halt(n)
			}
		}()
		// sleepTo sleeps past minute m of the bubble and waits for the
		// replicas to settle.
		sleepTo := func(m int) {
			time.Sleep(time.Until(log.t0.Add(time.Duration(m)*time.Minute + time.Second)))
			synctest.Wait()
		}

		sleepTo(5)
		runs := log.since(0)
		if len(runs) != 5 {
			t.Fatalf("runs in 5 minutes: %v, want one per tick", runs)
		}
		holder := runs[0][:1]
		for i, r := range runs {
			if want := fmt.Sprintf("%s@%d", holder, i+1); r != want {
				t.Errorf("run %d: %s, want %s (the holder, every tick)", i, r, want)
			}
		}

		// The holder dies after its run of minute 5: its lease lasts until
		// minute 7, when another replica takes the job over.
		dead := nodes[holder]
		dead.store.dead.Store(true)
		halt(dead)
		delete(nodes, holder)
		seen := log.len()
		sleepTo(6)
		if runs := log.since(seen); len(runs) != 0 {
			t.Errorf("runs while the dead holder's lease lived: %v", runs)
		}
		sleepTo(7)
		runs = log.since(seen)
		if len(runs) != 1 || runs[0][:1] == holder || runs[0][1:] != "@7" {
			t.Fatalf("runs at minute 7, when the dead holder's lease ended: %v, want one by another replica", runs)
		}
		holder = runs[0][:1]

		// A clean stop hands the job over at the next tick.
		halt(nodes[holder])
		delete(nodes, holder)
		seen = log.len()
		sleepTo(8)
		runs = log.since(seen)
		if len(runs) != 1 || runs[0][:1] == holder || runs[0][1:] != "@8" {
			t.Fatalf("runs at minute 8, after the holder stopped cleanly: %v, want one by the last replica", runs)
		}
	})
}
