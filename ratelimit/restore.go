// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStateLost is what a [Restorer]'s Apply returns, having written and
// decided nothing, while its exact counts are not known to be whole: the
// backend restarted empty (its marker key is gone) and nobody has
// restored them from the store's records yet.
var ErrStateLost = errors.New("ratelimit: the backend has lost its state; the exact counts are being rebuilt from the store")

// CountBucket is the members of one count bucket as the store's records
// give them, to restore a backend that lost them.
type CountBucket struct {
	// Key is the bucket key ([BucketKey]).
	Key string
	// Window is the limit's window in microseconds (0 for
	// pending-authorizations, whose members carry their expiry).
	Window int64
	// Members maps each member to its timestamp in microseconds, as
	// [Op.MemberTime] says.
	Members map[string]int64
}

// Restorer is a [Source] that can lose its state and say so.
type Restorer interface {
	Source
	// Restore adds the members of buckets that still count, whatever the
	// limit (the store may hold more than a limit after an overshoot), and
	// marks the state whole, so that Apply stops returning ErrStateLost.
	// An error means the state is still not known whole; Restore may be
	// called again.
	Restore(ctx context.Context, buckets []CountBucket) error
}

// CountLoader returns the count buckets that the store's records give at
// now: the exact counts a backend must hold.
type CountLoader func(ctx context.Context, now time.Time) ([]CountBucket, error)

// restoreTimeout bounds one rebuild: reading the store's records and
// writing them to the backend. While another replica restores, Apply
// polls every restorePoll, at most maxRestoreTries times (its caller's
// deadline ends it sooner).
const (
	restoreTimeout  = 2 * time.Minute
	restorePoll     = 20 * time.Millisecond
	maxRestoreTries = 1000
)

// Recovering is a [Source] over a [Restorer] that rebuilds the exact
// counts from the store when the backend has lost them, before it admits
// anything: an Apply that meets ErrStateLost starts one rebuild (one per
// process at a time; the backend serialises the replicas) and applies again
// once it has finished. A caller whose deadline passes first gets the
// error, which the adapter's on-backend-error resolves.
//
// Rate buckets (GCRA) cannot be rebuilt from the store and start full:
// after a loss each client may spend up to one burst again. The
// documentation (docs/rate-limits.md) states it.
type Recovering struct {
	src  Restorer
	load CountLoader
	log  *slog.Logger

	mu      sync.Mutex
	running chan struct{} // closed when the current rebuild ends; nil when none runs

	rebuilds atomic.Uint64
}

var _ Source = (*Recovering)(nil)

// NewRecovering returns src restoring itself from load. log nil discards.
func NewRecovering(src Restorer, load CountLoader, log *slog.Logger) *Recovering {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Recovering{src: src, load: load, log: log}
}

// Rebuilds is the number of rebuilds that completed.
func (r *Recovering) Rebuilds() uint64 { return r.rebuilds.Load() }

// Apply implements [Source]. While the state is lost it rebuilds, or
// waits for the replica that holds the backend's restore lock, polling
// every restorePoll until the caller's context ends.
func (r *Recovering) Apply(ctx context.Context, b *Batch) (*BatchResult, error) {
	for try := 0; ; try++ {
		res, err := r.src.Apply(ctx, b)
		if !errors.Is(err, ErrStateLost) || try == maxRestoreTries {
			return res, err
		}
		select {
		case <-r.rebuild():
		case <-ctx.Done():
			return nil, err
		}
		if try > 0 {
			select {
			case <-time.After(restorePoll):
			case <-ctx.Done():
				return nil, err
			}
		}
	}
}

// Get implements [Source].
func (r *Recovering) Get(ctx context.Context, keys []string) (*Snapshot, error) {
	return r.src.Get(ctx, keys)
}

// Reset implements [Source].
func (r *Recovering) Reset(ctx context.Context, key string) error { return r.src.Reset(ctx, key) }

// Ping checks the backend, for readiness, when it can be pinged.
func (r *Recovering) Ping(ctx context.Context) error {
	if p, ok := r.src.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Unwrap returns the backend.
func (r *Recovering) Unwrap() Restorer { return r.src }

// rebuild starts a rebuild unless one runs, and returns a channel closed
// when it ends. The rebuild runs on its own context: a request that gives
// up waiting does not stop it.
func (r *Recovering) rebuild() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running != nil {
		return r.running
	}
	done := make(chan struct{})
	r.running = done
	go func() {
		_ = r.Rebuild(context.Background()) // logged; the next request tries again
		r.mu.Lock()
		r.running = nil
		r.mu.Unlock()
		close(done)
	}()
	return done
}

// Rebuild loads the exact counts from the store and restores them into
// the backend now, within restoreTimeout.
func (r *Recovering) Rebuild(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	start := time.Now()
	buckets, err := r.load(ctx, start)
	if err == nil {
		err = r.src.Restore(ctx, buckets)
	}
	if err != nil {
		r.log.Warn("rate limiter: rebuilding the exact counts from the store failed; the next request tries again", "err", err)
		return err
	}
	r.rebuilds.Add(1)
	r.log.Warn("rate limiter: the backend had lost its state; exact counts rebuilt from the store (rate buckets start full)",
		"buckets", len(buckets), "took", time.Since(start).Round(time.Millisecond))
	return nil
}
