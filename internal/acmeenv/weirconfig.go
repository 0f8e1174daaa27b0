// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listeners are the loopback addresses a system test's weir listens on.
type Listeners struct{ ACME, HTTP, Admin string }

// WeirConfig is the YAML text of the configuration the system tests give
// weir, over its defaults (server.ParseConfig): its data directory and
// listeners; the challenges sent to e's responders and DNS server, with a
// 5 s timeout; 127.0.0.0/8 may be certified; CRLs are made on read (the
// tests read them right after a revocation); the log keeps to warnings;
// and every rate limit is off (the limiter's tests turn on what they
// exercise). It is text, so that this package needs nothing of package
// server, whose own tests use it too: it is the one copy of that test
// configuration.
func (e *Env) WeirConfig(dataDir string, ls Listeners) []byte {
	return fmt.Appendf(nil, `data-dir: %q
server:
  listen: %q
  http: {listen: %q}
admin: {listen: %q}
challenges:
  http-01: {port: %d}
  tls-alpn-01: {port: %d}
  dns-resolver: %q
  timeout: 5s
log: {level: warn}
ca:
  policy: {allowed-ip-ranges: [127.0.0.0/8]}
  crl-delay: 0s
rate-limiting:
  global: {enabled: false}
  account-creation: {enabled: false}
  order-creation: {enabled: false}
  duplicate-certificate: {enabled: false}
  failed-validation: {enabled: false}
  pending-authorizations: {enabled: false}
  registered-domain: {enabled: false}
`, dataDir, ls.ACME, ls.HTTP, ls.Admin, e.HTTP01Port, e.TLSALPN01Port, e.DNS.Addr())
}

// Reroute gives e a new HTTP client, trusting Roots, that dials routes[addr]
// for a host:port in routes and addr itself otherwise: a restarted server
// listens on new ports while what it issued names the old ones.
func (e *Env) Reroute(routes map[string]string) {
	e.HTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.Roots},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := routes[addr]; ok {
				addr = to
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	e.t.Cleanup(e.HTTP.CloseIdleConnections)
}
