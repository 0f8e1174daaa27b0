package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/web"
)

// readinessTimeout bounds each readiness check.
const readinessTimeout = time.Second

// newHealth makes the /healthz and /readyz endpoints of s, served on the
// ACME listener and on the admin listener: ready when the ACME store, the
// limiter backend and a shared nonce store answer.
func (s *server) newHealth() *web.Health {
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

// cmdHealthcheck asks a running weir's /readyz and exits 0 when it is
// ready: the container image's HEALTHCHECK, which has no curl.
func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: weir healthcheck [-config FILE] [-url URL] [-timeout D]\n\n"+
			"GETs /readyz of a running weir and exits 0 when it answers 200, 1 otherwise.\n"+
			"The default URL is the admin listener's when it is enabled, else the ACME\n"+
			"listener's, on loopback when the listener binds every interface. HTTPS is\n"+
			"verified against <data-dir>/root.pem and the system roots.\n\n")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	rawURL := fs.String("url", "", "the readiness `URL` (default: from the configuration)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this `duration`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "weir healthcheck: %v\n", err)
		return 1
	}
	u := *rawURL
	if u == "" {
		u = readyzURL(cfg)
	}
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: healthcheckRoots(cfg), MinVersion: tls.VersionTLS12},
		Proxy:           nil, // a probe of this host never goes through a proxy
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		fmt.Fprintf(stderr, "weir healthcheck: %v\n", err)
		return 1
	}
	res, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "weir healthcheck: %v\n", err)
		return 1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	out := stdout
	if res.StatusCode != http.StatusOK {
		out = stderr
	}
	fmt.Fprintf(out, "%s: %s\n%s", u, res.Status, body)
	if res.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

// readyzURL is where a local probe finds /readyz: the admin listener when
// it is enabled, else the ACME listener.
func readyzURL(cfg Config) string {
	if enabled(cfg.Admin.Enabled) {
		return adminURL(cfg) + web.PathReadyz
	}
	return "https://" + dialAddr(cfg.Server.Listen) + web.PathReadyz
}

// dialAddr turns a listen address into one to connect to from the same
// host: a listener on every interface is reached on loopback.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}

// healthcheckRoots trusts the system roots and weir's own root.
func healthcheckRoots(cfg Config) *x509.CertPool {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return pool
	}
	if pem, err := os.ReadFile(dataPath(dd, fileRootPEM)); err == nil {
		pool.AppendCertsFromPEM(pem)
	} else if cfg.CA.RootFile != "" {
		if pem, err := os.ReadFile(cfg.CA.RootFile); err == nil {
			pool.AppendCertsFromPEM(pem)
		}
	}
	return pool
}
