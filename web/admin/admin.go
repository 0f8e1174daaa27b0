// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// ConfigInfo is what the admin surface shows of the loaded configuration.
type ConfigInfo struct {
	// File is the configuration file; "" when running on the defaults.
	File string `json:"file"`
	// YAML is the effective configuration, secrets removed.
	YAML string `json:"yaml"`
	// StartedAt is when the process started.
	StartedAt time.Time `json:"started_at"`
	// Reload is the outcome of the last reload; nil before the first.
	Reload *ReloadInfo `json:"last_reload,omitempty"`
}

// ReloadInfo is the outcome of one configuration reload.
type ReloadInfo struct {
	At           time.Time `json:"at"`
	OK           bool      `json:"ok"`
	Error        string    `json:"error,omitempty"`
	NeedsRestart []string  `json:"needs_restart,omitempty"`
}

// Config wires the admin surface to the running server.
type Config struct {
	// Token is the bearer token every request but /healthz and /readyz
	// needs; "" turns authentication off (admin.auth: none, loopback only).
	// SetToken replaces it. It is the credential named RootName, with the
	// operate role.
	Token string
	// Credentials are the named credentials with their roles
	// (credentials.go); nil for none but the token. Unused under
	// admin.auth: none.
	Credentials *CredentialSet
	// Hosts are the names and IP addresses the listener answers for, as
	// CanonicalHost accepts them; a request naming another host in Host
	// gets 421. The IP address a connection arrived at is always accepted.
	Hosts []string
	// TLS says that the listener serves HTTPS: the session cookie is then
	// Secure even when a request reaches it through a proxy.
	TLS bool
	// Service is the ACME service.
	Service *acme.Service
	// Limits is the rate limiter as the service applies it.
	Limits *limits.Adapter
	// Edge is the in-process global layer; GlobalEnabled reports whether
	// it is enforced.
	Edge          *ratelimit.Edge
	GlobalEnabled func() bool
	// Metrics feeds /metrics and the limiter activity; required.
	Metrics *Metrics
	// Config describes the loaded configuration.
	Config func() ConfigInfo
	// Health and Ready serve /healthz and /readyz without authentication.
	Health, Ready http.Handler
	// Audit records the state-changing requests (audit.go); nil records none.
	Audit Auditor
	// Log receives the admin actions (resets, revocations, deactivations).
	Log *slog.Logger
	// TransparencyLog is the verifiable log (logapi.go); nil when it is off.
	TransparencyLog TransparencyLog
	// Now is the clock (nil means time.Now).
	Now func() time.Time
}

// Server is the admin API, the dashboard and /metrics.
type Server struct {
	cfg   Config
	auth  *auth
	hosts hostPolicy
	// crossOrigin refuses state-changing requests that a browser sends
	// from another origin.
	crossOrigin *http.CrossOriginProtection
	// router is the route table, which authorize looks requests up in.
	router *chi.Mux
}

// New returns the admin surface.
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil || cfg.Limits == nil || cfg.Metrics == nil || cfg.Config == nil {
		return nil, errors.New("admin: Service, Limits, Metrics and Config are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.GlobalEnabled == nil {
		cfg.GlobalEnabled = func() bool { return cfg.Edge != nil }
	}
	hosts, err := newHostPolicy(cfg.Hosts)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, auth: newAuth(cfg.Token, cfg.Credentials, cfg.Now), hosts: hosts, crossOrigin: http.NewCrossOriginProtection()}, nil
}

// SetToken replaces the admin token (a rotation) and ends every dashboard
// session. It fails under admin.auth: none, which only a restart changes.
func (s *Server) SetToken(token string) error { return s.auth.setToken(token) }

// Handler returns the routes of the admin listener. Every request but the
// probes passes the host check, then the cross-origin check; the
// dashboard's pages and the API then need a credential or a session, and
// the role their route needs (roles.go).
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	s.router = r
	r.Use(s.checkHost, securityHeaders, s.checkOrigin)
	if s.cfg.Health != nil {
		r.Handle("/healthz", s.cfg.Health)
	}
	if s.cfg.Ready != nil {
		r.Handle("/readyz", s.cfg.Ready)
	}
	// The stylesheet and icon are public: the login page needs them.
	r.Get("/static/*", s.serveStatic)
	r.Get("/login", s.loginForm)
	r.Post("/login", s.login)
	r.Post("/logout", s.logout)
	r.Group(func(r chi.Router) {
		r.Use(s.authenticate, s.auditActions, s.authorize)
		r.Method(http.MethodGet, "/metrics", s.cfg.Metrics.Handler())
		r.Route("/api/v1", s.apiRoutes)
		s.dashboardRoutes(r)
	})
	return r
}

// securityHeaders keeps admin pages out of frames and caches.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'")
		next.ServeHTTP(w, r)
	})
}
