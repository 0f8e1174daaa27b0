// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

// newAdmin builds the admin surface of s (admin API, dashboard, /metrics,
// /healthz, /readyz) with the bearer token from admin.token-file.
func (s *Server) newAdmin() error {
	if !enabled(s.cfg.Admin.Enabled) {
		return nil
	}
	token, err := loadOrCreateAdminToken(s.cfg)
	if err != nil {
		return err
	}
	s.adminToken = sha256.Sum256([]byte(token))
	// The named credentials live in the store, read every second or so
	// (Serve runs the set); the token file's works without it.
	if adminTokenWanted(s.cfg) {
		s.adminCreds = admin.NewCredentialSet(s.store, nil)
		if err := s.adminCreds.Refresh(context.Background()); err != nil {
			s.log.Error("admin credentials: the first read failed; named credentials are refused until one succeeds", "err", err)
		}
	}
	s.admin, err = admin.New(admin.Config{
		Token: token, Credentials: s.adminCreds, Hosts: adminHosts(s.cfg.Admin, s.serving.leaf()), TLS: s.cfg.Admin.TLS,
		Service: s.svc, Limits: s.limits, Edge: s.edge,
		GlobalEnabled: func() bool { return s.currentConfig().RateLimiting.Global.Enabled },
		Metrics:       s.metrics, Config: s.configInfo,
		Health: http.HandlerFunc(s.health.Live), Ready: http.HandlerFunc(s.health.Ready),
		Audit: s.audit, Log: s.log, TransparencyLog: s.adminLog(),
	})
	return err
}

// currentConfig returns the running configuration (reloads change it).
func (s *Server) currentConfig() Config {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.cfg
}

// configInfo describes the running configuration for the admin surface.
func (s *Server) configInfo() admin.ConfigInfo {
	cfg := s.currentConfig()
	cfg.Storage = cfg.Storage.redacted()
	text, err := effectiveYAML(cfg)
	if err != nil {
		text = "# cannot render the configuration: " + err.Error()
	}
	info := admin.ConfigInfo{File: s.configPath, YAML: text, StartedAt: s.started}
	s.reloaded.mu.Lock()
	defer s.reloaded.mu.Unlock()
	if !s.reloaded.at.IsZero() {
		r := &admin.ReloadInfo{At: s.reloaded.at, OK: s.reloaded.err == nil, NeedsRestart: s.reloaded.restart}
		if s.reloaded.err != nil {
			r.Error = s.reloaded.err.Error()
		}
		info.Reload = r
	}
	return info
}

// serveAdmin runs the admin listener until ctx ends; HTTPS with the
// server's certificate when admin.tls is set.
func (s *Server) serveAdmin(ctx context.Context, ln net.Listener) error {
	hs := s.httpServer(s.admin.Handler())
	errc := make(chan error, 1)
	go func() {
		if s.cfg.Admin.TLS {
			hs.TLSConfig = s.serving.tlsConfig()
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("admin listener: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut)
	return nil
}

// httpServer is an http.Server for h with weir's timeouts and its errors
// in the log.
func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// HasAdmin reports whether the server has an admin listener to serve
// (admin.enabled).
func (s *Server) HasAdmin() bool { return s.admin != nil }

// AdminURL is the base URL of the admin listener for clients on this
// host: on loopback when it binds every interface.
func AdminURL(cfg Config) string {
	scheme := "http"
	if cfg.Admin.TLS {
		scheme = "https"
	}
	return scheme + "://" + dialAddr(cfg.Admin.Listen)
}
