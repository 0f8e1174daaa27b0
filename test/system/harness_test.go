// SPDX-License-Identifier: Apache-2.0

// Package system holds weir's system tests that need nothing of package
// server but its exported API: each starts a whole weir server on
// loopback and drives it as its users do, an ACME client through acmeenv,
// an operator through weir's commands, the admin API and the dashboard,
// and faults through internal/systest (a Redis of the test's own killed
// or paused, replicas on one PostgreSQL schema). The few system tests
// that must reach the server's unexported state stay in package server.
package system

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/weirproc"
	"github.com/weir-pki/weir/server"
)

// env is a whole weir server on loopback with the ACME side of acmeenv.
type env struct {
	*acmeenv.Env
	t   *testing.T
	cfg server.Config
	srv *server.Server
	// artefacts is the base URL of the public artefacts that the
	// certificates name (server.ArtefactURL).
	artefacts string
	// adminURL is the admin listener's base URL ("" when admin is off).
	adminURL string
	// cli runs weir command lines against the server (cli_test.go).
	cli weirproc.CLI
	// stop stops the server (once; the test's end calls it too).
	stop func()
}

// startEnv starts weir with a test configuration that mutate may adjust:
// the challenges go to acmeenv's responders, 127.0.0.0/8 may be
// certified, CRLs are made on read, and every rate limit is off.
func startEnv(t *testing.T, mutate func(*server.Config)) *env {
	t.Helper()
	return startEnvLog(t, mutate, io.Discard)
}

// startEnvLog is startEnv with the server's log written to logw.
func startEnvLog(t *testing.T, mutate func(*server.Config), logw io.Writer) *env {
	t.Helper()
	e := &env{t: t, Env: acmeenv.Start(t)}
	ln, adminLn, plainLn := acmeenv.ListenLoopback(t), acmeenv.ListenLoopback(t), acmeenv.ListenLoopback(t)
	cfg, err := server.ParseConfig("", e.WeirConfig(t.TempDir(), acmeenv.Listeners{
		ACME: ln.Addr().String(), HTTP: plainLn.Addr().String(), Admin: adminLn.Addr().String()}))
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	// The running server watches its file, as weir serve -config does.
	e.cli = weirproc.CLI{Builder: &builder, Config: filepath.Join(cfg.DataDir, "weir.yaml")}
	e.writeConfig(cfg)
	e.srv, err = server.New(t.Context(), cfg, server.Options{ConfigFile: e.cli.Config, Log: logw})
	if err != nil {
		t.Fatal(err)
	}
	if e.srv.HasAdmin() {
		e.adminURL = server.AdminURL(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ls := server.Listeners{ACME: ln, Admin: adminLn}
	if cfg.Server.HTTP.Listen == plainLn.Addr().String() {
		ls.HTTP = plainLn
	}
	go func() { done <- e.srv.Serve(ctx, ls) }()
	e.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		e.srv.Close()
	})
	t.Cleanup(e.stop)
	e.artefacts = server.ArtefactURL(cfg)
	e.Connect(e.srv.BaseURL(), e.srv.RootPEM())
	e.CRLIssuer = e.srv.Intermediate
	return e
}

// restart stops e and starts weir again on its data directory, as an
// operator restarts it: with startEnv's configuration as mutate leaves
// it, and at e's URLs (server.external-url, server.http.external-url),
// since the test servers listen on new ports. The new env's HTTP client
// takes those URLs to the new listeners, so the URLs in what e issued
// (CRL distribution points, the ACME objects' URLs) reach the new server.
func (e *env) restart(t *testing.T, mutate func(*server.Config)) *env {
	t.Helper()
	e.stop()
	n := startEnv(t, func(c *server.Config) {
		if mutate != nil {
			mutate(c)
		}
		c.DataDir, c.Server.ExternalURL = e.cfg.DataDir, e.Base
		if c.Server.HTTP.Listen != "" {
			c.Server.HTTP.ExternalURL = e.artefacts
		}
	})
	n.Reroute(map[string]string{
		strings.TrimPrefix(e.Base, "https://"):     n.cfg.Server.Listen,
		strings.TrimPrefix(e.artefacts, "http://"): n.cfg.Server.HTTP.Listen,
	})
	return n
}

// writeConfig writes cfg as the server's config file, which the running
// server watches.
func (e *env) writeConfig(cfg server.Config) {
	e.t.Helper()
	b, err := yaml.Marshal(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.writeConfigBytes(b)
}

// writeConfigBytes replaces the server's config file atomically (a
// rename, as editors that save by rename do), so the server's poll never
// reads half of it.
func (e *env) writeConfigBytes(b []byte) {
	e.t.Helper()
	tmp := e.cli.Config + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, e.cli.Config); err != nil {
		e.t.Fatal(err)
	}
}

// adminToken is the admin listener's bearer token, read from its file
// (server.AdminTokenFile).
func (e *env) adminToken(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(server.AdminTokenFile(e.cfg))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
