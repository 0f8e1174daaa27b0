// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/web"
)

// readinessTimeout bounds each readiness check.
const readinessTimeout = time.Second

// newHealth makes the /healthz and /readyz endpoints of s, served on the
// ACME listener and on the admin listener: ready when the ACME store, the
// limiter backend (or, under on-backend-error: degrade, its in-process
// fallback for at most degraded-ready-after) and a shared nonce store
// answer, and when the store and a SQLite limiter can write
// (writehealth.go).
func (s *Server) newHealth() *web.Health {
	s.writeHealth = s.newWriteHealth()
	checks := map[string]web.Check{
		"storage":   s.store.Ping,
		"ratelimit": limiterCheck(sourcePing(s.backend.src), s.limits),
	}
	for _, h := range s.writeHealth {
		ping := checks[h.name]
		checks[h.name] = func(ctx context.Context) error {
			if err := ping(ctx); err != nil {
				return err
			}
			return h.check(ctx)
		}
	}
	addNoncesCheck(checks, s.nonces)
	h := web.NewHealth(checks, readinessTimeout, s.log)
	h.AddWarning("ratelimit", limiterWarning(s.limits))
	if s.backend.persistence != nil {
		h.AddWarning("ratelimit-persistence", persistenceWarning(s.backend.persistence))
	}
	addNoncesWarning(h, s.nonces)
	if s.vlog != nil {
		h.AddWarning("transparency", s.vlog.warning)
	}
	return h
}

// newWriteHealth makes the write health of the store and, when it is
// SQLite, of the limiter's file, keyed by the name of their readiness
// check.
func (s *Server) newWriteHealth() []*writeHealth {
	lease := "write-probe:" + newOwner()
	store := &writeHealth{name: "storage", log: s.log, now: time.Now, onChange: s.metrics.SetWritable,
		probe: func(ctx context.Context) error {
			_, err := s.store.TryLease(ctx, lease, lease, time.Now().UTC(), time.Minute)
			return err
		}}
	if st, ok := s.store.(*sqlite.Store); ok {
		store.dir = filepath.Dir(filepath.Join(s.cfg.DataDir, s.cfg.Storage.Path))
		store.faults = st.LastWriteFault
	}
	s.releaseProbe = func(ctx context.Context) error { return s.store.ReleaseLease(ctx, lease, lease) }
	hs := []*writeHealth{store}
	if rl, ok := s.backend.src.(*sqlite.RateLimitSource); ok {
		hs = append(hs, &writeHealth{name: "ratelimit", log: s.log, now: time.Now, onChange: s.metrics.SetWritable,
			probe: rl.ProbeWrite, dir: filepath.Dir(rl.Path()), faults: rl.LastWriteFault})
	}
	return hs
}

// runWriteHealth probes every watched store until ctx ends, then drops
// the store's probe lease.
func (s *Server) runWriteHealth(ctx context.Context) error {
	done := make(chan struct{}, len(s.writeHealth))
	for _, h := range s.writeHealth {
		go func() { h.run(ctx); done <- struct{}{} }()
	}
	for range s.writeHealth {
		<-done
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	return s.releaseProbe(rctx)
}

// sourcePing is the readiness check of a limiter backend: its Ping (SQLite,
// Redis), or nothing to check for the in-process memory source.
func sourcePing(src ratelimit.Source) web.Check {
	if p, ok := src.(interface{ Ping(context.Context) error }); ok {
		return p.Ping
	}
	return func(context.Context) error { return nil }
}

// limiterCheck is the readiness of the limiter. Under deny and allow it
// is the backend's ping. Under degrade a failing backend is not unready
// at once, since the fallback decides, but only once the degraded episode
// has lasted longer than degraded-ready-after; a ping that answers ends
// the episode, so that a replica out of rotation comes back by itself.
func limiterCheck(ping web.Check, a *limits.Adapter) web.Check {
	return func(ctx context.Context) error {
		err := ping(ctx)
		a.NoteBackend(err)
		if d, tooLong := a.Degraded(time.Now()); tooLong {
			if err == nil {
				err = fmt.Errorf("the backend fails to decide")
			}
			return fmt.Errorf("rate limiter degraded for %s: %w", d.Round(time.Second), err)
		}
		if a.Degrades() {
			return nil // the fallback decides meanwhile; limiterWarning says so
		}
		return err
	}
}

// limiterWarning says when the limiter decides in process.
func limiterWarning(a *limits.Adapter) web.Warn {
	return func(context.Context) string {
		if since := a.DegradedSince(); !since.IsZero() {
			return fmt.Sprintf("degraded since %s: the backend cannot decide, each replica decides in process at the configured limits (up to N times a limit across N replicas)", since.UTC().Format(time.RFC3339))
		}
		return ""
	}
}

// persistenceRecheck is how long a persistence reading is reused.
const persistenceRecheck = time.Minute

// persistenceWarning says when the limiter's Redis keeps nothing across
// a restart, read at most once per persistenceRecheck.
func persistenceWarning(check func(context.Context) (bool, string, error)) web.Warn {
	var (
		mu   sync.Mutex
		at   time.Time
		last string
	)
	return func(ctx context.Context) string {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(at) < persistenceRecheck {
			return last
		}
		ok, _, err := check(ctx)
		if err != nil {
			return last // unknown now; keep what was known
		}
		at, last = time.Now(), ""
		if !ok {
			last = noPersistence
		}
		return last
	}
}
