// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/web"
)

// What a client on weir's own host needs to reach it: weir healthcheck
// and the operator commands, which read the server's configuration to
// find its listeners, its root and its admin token.

// readyURL is where a local probe finds /readyz: the admin listener when
// it is enabled, else the ACME listener.
func readyURL(cfg Config) string {
	if enabled(cfg.Admin.Enabled) {
		return AdminURL(cfg) + web.PathReadyz
	}
	return "https://" + dialAddr(cfg.Server.Listen) + web.PathReadyz
}

// CheckReady asks a running weir's /readyz at url, or at readyURL(cfg)
// when url is "", as weir healthcheck does (the container image's
// HEALTHCHECK, which has no curl). HTTPS is verified against
// ClientRoots(cfg), and no proxy is used. It returns the answer as
// "URL: STATUS\nBODY" (the body cut at 4 KiB) and whether it is 200; an
// error means no answer came within timeout.
func CheckReady(ctx context.Context, cfg Config, url string, timeout time.Duration) (report string, ready bool, err error) {
	if url == "" {
		url = readyURL(cfg)
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ClientRoots(cfg), MinVersion: tls.VersionTLS12},
		Proxy:           nil, // a probe of this host never goes through a proxy
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", false, err
	}
	res, err := client.Do(req)
	if err != nil {
		return "", false, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return fmt.Sprintf("%s: %s\n%s", url, res.Status, body), res.StatusCode == http.StatusOK, nil
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

// ClientRoots are the roots a client on this host trusts weir's listeners
// with: the system roots and weir's own root (<data-dir>/root.pem, else
// ca.root-file).
func ClientRoots(cfg Config) *x509.CertPool {
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
