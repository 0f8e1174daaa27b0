// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/weir-pki/weir/web"
)

// Write health: readiness that tells whether the store and the SQLite
// limiter can write, not only whether they answer a read (Ping). Each is
// watched by a writeHealth, fed by two things:
//
//   - the outcome of real writes: a write that failed for a disk fault (a
//     full disk, a read-only file, an I/O error; the store's
//     LastWriteFault) makes it unwritable for faultHold after the fault;
//   - a write probe every probeInterval, a real write that leaves nothing
//     behind (a lease renewal of the store, an insert and delete of the
//     limiter file), with a check that the data directory's file system
//     has at least minFreeBytes free: it fails while the disk cannot take
//     a write, and succeeds again by itself once it can.
//
// A probe that has not finished for probeStale (a hung disk) counts as
// failed. So /readyz goes 503 at most probeInterval + the readiness
// timeout after the disk fills, and 200 again at most faultHold after the
// last failed write once space returns.
const (
	probeInterval = time.Second
	probeTimeout  = 2 * time.Second
	probeStale    = 4 * time.Second
	faultHold     = 10 * time.Second
	// minFreeBytes is the free space below which the data directory
	// counts as full: a margin for the write-ahead log to grow in, so
	// that readiness drops before writes start failing.
	minFreeBytes = 8 << 20
)

// writeHealth watches whether one store can write.
type writeHealth struct {
	name string
	// probe makes one real write; dir, when set, is the directory whose
	// file system must keep minFreeBytes free.
	probe func(ctx context.Context) error
	dir   string
	// faults returns the time and cause of the store's last write that
	// failed for a disk fault; nil if the store does not tell.
	faults func() (time.Time, error)
	log    *slog.Logger
	now    func() time.Time
	// onChange, when set, hears each change of writability.
	onChange func(name string, ok bool)

	mu      sync.Mutex
	started time.Time // when the probe under way began; zero when none is
	ran     time.Time // when the last probe finished
	err     error     // its error
	ok      bool      // the last state reported
	known   bool      // ok has been reported once

	// evalMu makes reading the state and reporting it one step, so that a
	// state read before a probe finished is never reported after the
	// state that probe made.
	evalMu sync.Mutex
}

// probeOnce runs the probe and records its outcome.
func (h *writeHealth) probeOnce(ctx context.Context) {
	h.mu.Lock()
	if !h.started.IsZero() {
		h.mu.Unlock()
		return
	}
	h.started = h.now()
	h.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	err := h.write(pctx)
	cancel()
	h.mu.Lock()
	h.started, h.ran, h.err = time.Time{}, h.now(), err
	h.mu.Unlock()
	h.evaluate()
}

// write is one probe: the free space first, then the write.
func (h *writeHealth) write(ctx context.Context) error {
	if h.dir != "" {
		free, err := freeBytes(h.dir)
		if err != nil {
			return fmt.Errorf("reading the free space of %s: %w", h.dir, err)
		}
		if free < minFreeBytes {
			return fmt.Errorf("%s: %d bytes free, below the %d the store needs: the disk is full", h.dir, free, minFreeBytes)
		}
	}
	return h.probe(ctx)
}

// run probes every probeInterval until ctx ends.
func (h *writeHealth) run(ctx context.Context) {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		h.probeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// errUnwritable is the error of a store that cannot write, which /readyz
// names as such.
var errUnwritable = web.ErrCannotWrite

// state says whether the store can write at now, and if not why.
func (h *writeHealth) state(now time.Time) error {
	h.mu.Lock()
	started, ran, err := h.started, h.ran, h.err
	h.mu.Unlock()
	switch {
	case !started.IsZero() && now.Sub(started) > probeStale:
		return fmt.Errorf("%w: a write probe has not finished for %s", errUnwritable, now.Sub(started).Round(time.Second))
	case err != nil:
		return fmt.Errorf("%w: write probe: %w", errUnwritable, err)
	case ran.IsZero():
		return nil // not probed yet; check probes first
	}
	if h.faults != nil {
		if at, ferr := h.faults(); !at.IsZero() && now.Sub(at) < faultHold {
			return fmt.Errorf("%w: a write failed %s ago: %w", errUnwritable, now.Sub(at).Round(time.Millisecond), ferr)
		}
	}
	return nil
}

// check is the readiness check: the state, after a first probe if none
// has run yet.
func (h *writeHealth) check(ctx context.Context) error {
	h.mu.Lock()
	never := h.ran.IsZero() && h.started.IsZero()
	h.mu.Unlock()
	if never {
		h.probeOnce(ctx)
	}
	return h.evaluate()
}

// evaluate reads the state now and reports it.
func (h *writeHealth) evaluate() error {
	h.evalMu.Lock()
	defer h.evalMu.Unlock()
	err := h.state(h.now())
	h.report(err)
	return err
}

// report logs and hands on a change of writability.
func (h *writeHealth) report(err error) {
	ok := err == nil
	h.mu.Lock()
	changed := !h.known || h.ok != ok
	h.ok, h.known = ok, true
	h.mu.Unlock()
	if !changed {
		return
	}
	if ok {
		h.log.Info("store writable", "store", h.name)
	} else {
		h.log.Error("store cannot write; /readyz answers 503", "store", h.name, "err", err)
	}
	if h.onChange != nil {
		h.onChange(h.name, ok)
	}
}
