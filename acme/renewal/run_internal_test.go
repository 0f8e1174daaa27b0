// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// TestPlannerDefersFirstRebuild: with planning on, the planner's first
// rebuild waits for the wait Run is given (the Service's startDefer),
// then reads the stored windows. Time is the synctest bubble's.
func TestPlannerDefersFirstRebuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const startDefer = 400 * time.Millisecond
		at := time.Now().Add(24 * time.Hour)
		inv := newPlanStore(&planClock{t: time.Now().Add(-2 * planMargin)}) // issued before the rebuild's cut
		inv.put(Window{Serial: "0a01", AccountID: "a", Start: at, End: at.Add(time.Hour)}, 0)
		p := NewPlanner(time.Now)
		loaded := func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.loaded
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		on := func() bool { return true }
		go func() { p.Run(ctx, startDefer, on, inv, slog.New(slog.DiscardHandler)); close(done) }()
		defer func() { cancel(); <-done }()

		time.Sleep(startDefer - time.Millisecond)
		synctest.Wait()
		if loaded() {
			t.Fatal("the planner rebuilt before startDefer")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !loaded() {
			t.Fatal("the planner had not rebuilt at startDefer")
		}
		p.mu.Lock()
		n := p.st.count("a")
		p.mu.Unlock()
		if n != 1 {
			t.Errorf("after the first rebuild the plan holds %d windows of account a, want 1", n)
		}
	})
}
