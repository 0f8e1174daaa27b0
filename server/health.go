package server

import (
	"context"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/web"
)

// readinessTimeout bounds each readiness check.
const readinessTimeout = time.Second

// newHealth makes the /healthz and /readyz endpoints of s, served on the
// ACME listener and on the admin listener: ready when the ACME store, the
// limiter backend and a shared nonce store answer, and when the store and
// a SQLite limiter can write (writehealth.go).
func (s *Server) newHealth() *web.Health {
	s.writeHealth = s.newWriteHealth()
	checks := map[string]web.Check{
		"storage":   s.store.Ping,
		"ratelimit": sourcePing(s.backend.src),
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
	return web.NewHealth(checks, readinessTimeout, s.log)
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
