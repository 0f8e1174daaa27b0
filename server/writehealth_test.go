// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriteHealth: the write health of a store follows its probe and its
// real writes' faults: a failing probe fails it at once, a write fault
// keeps it failing for faultHold even while the probe passes, a probe
// that hangs fails it after probeStale, and each recovers by itself.
func TestWriteHealth(t *testing.T) {
	var (
		mu       sync.Mutex
		probeErr error
		faultAt  time.Time
		now      = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		changes  []bool
	)
	h := &writeHealth{name: "storage", log: slog.New(slog.DiscardHandler),
		now:      func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		probe:    func(context.Context) error { mu.Lock(); defer mu.Unlock(); return probeErr },
		faults:   func() (time.Time, error) { mu.Lock(); defer mu.Unlock(); return faultAt, errors.New("disk full") },
		onChange: func(_ string, ok bool) { mu.Lock(); changes = append(changes, ok); mu.Unlock() }}
	set := func(f func()) { mu.Lock(); f(); mu.Unlock() }
	ctx := context.Background()

	if err := h.check(ctx); err != nil {
		t.Fatalf("a writable store: %v", err)
	}
	set(func() { probeErr = errors.New("database or disk is full") })
	h.probeOnce(ctx)
	if err := h.check(ctx); err == nil || !strings.Contains(err.Error(), "write probe") {
		t.Errorf("a failing probe: %v, want its error", err)
	}
	set(func() { probeErr = nil; faultAt = now.Add(-time.Second) })
	h.probeOnce(ctx)
	if err := h.check(ctx); err == nil || !strings.Contains(err.Error(), "a write failed") {
		t.Errorf("a write fault 1 s ago with a passing probe: %v, want unwritable", err)
	}
	set(func() { now = now.Add(faultHold) })
	if err := h.check(ctx); err != nil {
		t.Errorf("faultHold after the last fault: %v, want writable again", err)
	}

	// A probe that never returns.
	release := make(chan struct{})
	set(func() { faultAt = time.Time{} })
	h.probe = func(context.Context) error { <-release; return nil }
	go h.probeOnce(ctx)
	for i := 0; ; i++ {
		h.mu.Lock()
		started := !h.started.IsZero()
		h.mu.Unlock()
		if started {
			break
		}
		if i > 1000 {
			t.Fatal("the probe did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if err := h.check(ctx); err != nil {
		t.Errorf("a probe under way for no time: %v, want writable", err)
	}
	set(func() { now = now.Add(probeStale + time.Second) })
	if err := h.check(ctx); err == nil || !strings.Contains(err.Error(), "has not finished") {
		t.Errorf("a probe hung for %s: %v, want unwritable", probeStale+time.Second, err)
	}
	close(release)
	for i := 0; h.check(ctx) != nil; i++ {
		if i > 1000 {
			t.Fatal("still unwritable after the hung probe returned")
		}
		time.Sleep(time.Millisecond)
	}
	want := []bool{true, false, true, false, true}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(changes, want) {
		t.Errorf("changes reported %v, want %v", changes, want)
	}
}

// TestFreeBytes: the data directory's free space can be read.
func TestFreeBytes(t *testing.T) {
	free, err := freeBytes(t.TempDir())
	if err != nil || free == 0 {
		t.Errorf("freeBytes = %d, %v", free, err)
	}
}
