package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
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
	Token string
	// Hosts are the names and IP addresses the listener answers for, as
	// CanonicalHost accepts them; a request naming another host in Host
	// gets 421. The IP address a connection arrived at is always accepted.
	Hosts []string
	// Service is the ACME service.
	Service *acme.Service
	// Limits is the rate limiter as the service applies it.
	Limits *acme.RateLimits
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
	// Log receives the admin actions (resets, revocations, deactivations).
	Log *slog.Logger
	// Now is the clock (nil means time.Now).
	Now func() time.Time
}

// Server is the admin API, the dashboard and /metrics.
type Server struct {
	cfg   Config
	hosts hostPolicy
	// crossOrigin refuses state-changing requests that a browser sends
	// from another origin.
	crossOrigin *http.CrossOriginProtection
	// session is the dashboard's cookie value and csrf its form token,
	// both derived from the admin token, so a new token logs everyone out.
	session, csrf string
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
	s := &Server{cfg: cfg, hosts: hosts, crossOrigin: http.NewCrossOriginProtection()}
	if cfg.Token != "" {
		s.session = derive(cfg.Token, "weir admin session")
		s.csrf = derive(cfg.Token, "weir admin csrf")
	}
	return s, nil
}

// derive is a value bound to the token that does not reveal it.
func derive(token, purpose string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(purpose))
	return hex.EncodeToString(m.Sum(nil))
}

// sessionCookie is the dashboard's login cookie.
const sessionCookie = "weir_admin"

// Handler returns the routes of the admin listener. Every request but the
// probes passes the host check, then the cross-origin check; the
// dashboard's pages and the API then need the token.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
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
		r.Use(s.authenticate)
		r.Handle("/metrics", s.cfg.Metrics.Handler())
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

// authed reports whether r carries the token (bearer) or the dashboard's
// session cookie; cookie reports which.
func (s *Server) authed(r *http.Request) (ok, cookie bool) {
	if s.cfg.Token == "" {
		return true, false
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, found := strings.Cut(h, " ")
		if found && strings.EqualFold(scheme, "Bearer") &&
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.Token)) == 1 {
			return true, false
		}
		return false, false
	}
	if c, err := r.Cookie(sessionCookie); err == nil &&
		subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1 {
		return true, true
	}
	return false, false
}

// authenticate refuses requests without the token: 401 with a
// WWW-Authenticate challenge for the API and /metrics, a redirect to the
// login page for the dashboard. A state-changing request authenticated by
// the cookie must also carry the CSRF token.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, cookie := s.authed(r)
		if !ok {
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/metrics" {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="weir admin"`)
			writeError(w, http.StatusUnauthorized, "a bearer token is required (the admin-token file in the data directory)")
			return
		}
		if cookie && r.Method != http.MethodGet && r.Method != http.MethodHead {
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-CSRF-Token")+r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
				writeError(w, http.StatusForbidden, "missing or wrong CSRF token")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// login checks the token typed into the login form and sets the session
// cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) != 1 {
		s.cfg.Log.Warn("admin login refused", "remote", r.RemoteAddr)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		s.renderLogin(w, "That token is not the admin token.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: s.session, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 12 * 3600,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, MaxAge: -1, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) { s.renderLogin(w, "") }
