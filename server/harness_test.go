// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/weirproc"
)

// testEnv is a whole weir server on loopback with the ACME side of
// acmeenv (a DNS server and http-01 / tls-alpn-01 responders for the
// test's names, an HTTP client that trusts weir's root).
type testEnv struct {
	*acmeenv.Env
	t   *testing.T
	cfg Config
	srv *Server
	// artefacts is the base URL of the public artefacts that the
	// certificates name: the plain-HTTP listener's, unless a test turned
	// it off.
	artefacts string
	// adminURL is the admin listener's base URL ("" when admin is off);
	// its token is in adminTokenPath(cfg).
	adminURL string
	// stop stops the server (once; the test's end calls it too).
	stop func()
	// cli runs weir command lines against the server (cli_test.go).
	cli weirproc.CLI
}

// startEnv starts weir with a test configuration that mutate may adjust.
func startEnv(t *testing.T, mutate func(*Config)) *testEnv {
	t.Helper()
	return startEnvLog(t, mutate, io.Discard)
}

// startEnvLog is startEnv with the server's log written to logw.
func startEnvLog(t *testing.T, mutate func(*Config), logw io.Writer) *testEnv {
	t.Helper()
	e := &testEnv{t: t, Env: acmeenv.Start(t)}
	ln, adminLn, plainLn := acmeenv.ListenLoopback(t), acmeenv.ListenLoopback(t), acmeenv.ListenLoopback(t)
	cfg, err := ParseConfig("", e.WeirConfig(t.TempDir(), acmeenv.Listeners{
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
	// The running server watches this file, as weir serve -config does.
	e.cli = weirproc.CLI{Builder: &builder, Config: filepath.Join(cfg.DataDir, "weir.yaml")}
	e.srv, err = New(t.Context(), cfg, Options{ConfigFile: e.cli.Config, Log: logw})
	if err != nil {
		t.Fatal(err)
	}
	e.writeConfig(cfg)
	if e.srv.HasAdmin() {
		e.adminURL = AdminURL(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ls := Listeners{ACME: ln, Admin: adminLn}
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
	e.artefacts = ArtefactURL(cfg)
	e.Connect(e.srv.BaseURL(), e.srv.RootPEM())
	e.CRLIssuer = e.srv.Intermediate
	return e
}

// restart stops e and starts weir again on its data directory, as an
// operator restarts it: with startEnv's configuration as mutate leaves
// it, and at e's URLs (server.external-url, server.http.external-url), since the test servers listen
// on new ports. The new env's HTTP client takes that URL to the new
// listener, so the URLs in what e issued (CRL distribution points, the
// ACME objects' URLs) reach the new server.
func (e *testEnv) restart(t *testing.T, mutate func(*Config)) *testEnv {
	t.Helper()
	e.stop()
	n := startEnv(t, func(c *Config) {
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
