package server

import (
	"context"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/web"
)

// readinessTimeout bounds each readiness check.
const readinessTimeout = time.Second

// newHealth makes the /healthz and /readyz endpoints of s, served on the
// ACME listener and on the admin listener: ready when the ACME store, the
// limiter backend and a shared nonce store answer.
func (s *Server) newHealth() *web.Health {
	checks := map[string]web.Check{
		"storage":   s.store.Ping,
		"ratelimit": sourcePing(s.backend.src),
	}
	addNoncesCheck(checks, s.nonces)
	return web.NewHealth(checks, readinessTimeout, s.log)
}

// sourcePing is the readiness check of a limiter backend: its Ping (SQLite,
// Redis), or nothing to check for the in-process memory source.
func sourcePing(src ratelimit.Source) web.Check {
	if p, ok := src.(interface{ Ping(context.Context) error }); ok {
		return p.Ping
	}
	return func(context.Context) error { return nil }
}
