// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/internal/weirproc"
)

// solo is one weir process on SQLite for the fault tests of the disk and
// of connections, with its DNS server and http-01 responder.
type solo struct {
	t      *testing.T
	p      *weirproc.Proc
	dns    *dnstest.Server
	tokens sync.Map // http-01 token -> key authorization
	http   int      // the responder's port
}

// newSolo starts the DNS server (every name is 127.0.0.1) and the
// http-01 responder; start runs weir.
func newSolo(t *testing.T) *solo {
	t.Helper()
	s := &solo{t: t}
	var err error
	if s.dns, err = dnstest.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.dns.Close() })
	s.dns.SetDefaultAddrs(netip.MustParseAddr("127.0.0.1"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.tokens.Load(strings.TrimPrefix(r.URL.Path, "/.well-known/acme-challenge/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, v.(string))
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	s.http = ln.Addr().(*net.TCPAddr).Port
	return s
}

// config is weir's configuration: SQLite store and limiter, http-01
// through the responder, extra appended (top-level blocks).
func (s *solo) config(dataDir, listen, server, extra string) string {
	return fmt.Sprintf(`data-dir: %q
server:
  listen: %q
  http: { listen: "" }
%sacme:
  validation-workers: 4
challenges:
  http-01: { enabled: true, port: %d }
  dns-resolver: %q
  timeout: 5s
storage:
  driver: sqlite
%sadmin:
  enabled: false
log:
  level: warn
`, dataDir, listen, server, s.http, s.dns.Addr(), extra)
}

// started records p and stops it when the test ends.
func (s *solo) started(p *weirproc.Proc) {
	s.p = p
	s.t.Cleanup(func() {
		if err := p.Stop(20 * time.Second); err != nil {
			s.t.Errorf("stopping weir (pid %d): %v", p.PID, err)
		}
		if s.t.Failed() {
			s.t.Logf("weir's log, last lines:\n%s", p.Tail(20))
		}
	})
}

// httpClient trusts weir's root and dials from the local address from
// (an IP of 127.0.0.0/8; "" lets the kernel choose).
func (s *solo) httpClient(from string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	listen := s.p.Listen
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.p.Roots}, ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, listen)
		}}
	s.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// acmeClient is an x/crypto/acme client with an account of its own,
// whose requests are never retried (the test reads every answer),
// through hc.
func (s *solo) acmeClient(ctx context.Context, hc *http.Client) (*xacme.Client, error) {
	c := &xacme.Client{Key: newKey(), DirectoryURL: s.p.Base + "/directory", HTTPClient: hc, UserAgent: "weir-fault-test",
		RetryBackoff: func(int, *http.Request, *http.Response) time.Duration { return -1 }}
	_, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	return c, err
}

// issue takes a new order for names to a certificate through c.
func (s *solo) issue(ctx context.Context, c *xacme.Client, names ...string) (*x509.Certificate, error) {
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(names...))
	if err != nil {
		return nil, fmt.Errorf("new-order: %w", err)
	}
	for _, u := range o.AuthzURLs {
		ch, err := http01(ctx, c, u)
		if err != nil {
			return nil, err
		}
		ka, err := c.HTTP01ChallengeResponse(ch.Token)
		if err != nil {
			return nil, err
		}
		s.tokens.Store(ch.Token, ka)
		if _, err := c.Accept(ctx, ch); err != nil {
			return nil, fmt.Errorf("accept: %w", err)
		}
		if err := pollAuthz(ctx, c, u); err != nil {
			return nil, err
		}
	}
	if o, err = pollOrder(ctx, c, o.URI); err != nil {
		return nil, err
	}
	_, leaf, err := finalizeOrder(ctx, c, o, names)
	return leaf, err
}

// readyz returns the status of GET /readyz through hc.
func (s *solo) readyz(hc *http.Client) int {
	res, err := hc.Get(s.p.Base + "/readyz")
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// waitReadyz polls /readyz every 100 ms until it answers want, at most
// limit, and returns how long that took.
func (s *solo) waitReadyz(hc *http.Client, want int, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		got := s.readyz(hc)
		if got == want {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return time.Since(start), fmt.Errorf("/readyz still %d after %s, want %d", got, limit, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
