// SPDX-License-Identifier: Apache-2.0

// Package acmeenv is the ACME client's side of a system test: a DNS
// server and http-01 / tls-alpn-01 responders on loopback for the test's
// names, an HTTP client that trusts the CA under test, x/crypto/acme
// clients that solve and publish challenges, and hand-made JWS requests.
// It knows nothing of weir's server package: the system tests start the
// server and give the Env its base URL and root (Connect).
package acmeenv

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/dnstest"
)

// Env is the ACME side of a system test.
type Env struct {
	t *testing.T
	// Base is the ACME server's base URL (Connect).
	Base string
	// DNS answers the test's names: 127.0.0.1 by default, and the TXT
	// records of the dns-01 family.
	DNS *dnstest.Server
	// Roots holds the root of the CA under test (Connect).
	Roots *x509.CertPool
	// HTTP trusts Roots (Connect).
	HTTP *http.Client
	// CRLIssuer is the certificate that must have signed the CRLs that
	// CRLAt reads (the server's intermediate); the harness sets it.
	CRLIssuer func() *x509.Certificate
	// HTTP01Port and TLSALPN01Port are the responders' ports, for the
	// server's challenge configuration.
	HTTP01Port, TLSALPN01Port int

	Tokens   sync.Map // http-01 token -> key authorization
	Redirect sync.Map // http-01 token -> the URL its challenge path redirects to
	alpnMu   sync.Mutex
	alpnCert map[string]*tls.Certificate // SNI -> challenge cert
}

// ListenLoopback listens on a free TCP port of 127.0.0.1 until the test
// ends.
func ListenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Port is the TCP port of ln.
func Port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// New is an Env of t without the DNS server and the challenge
// responders, for a server that validates nothing; Connect points it at
// the server.
func New(t *testing.T) *Env { return &Env{t: t, alpnCert: map[string]*tls.Certificate{}} }

// Start starts the DNS server and the challenge responders until the
// test ends.
func Start(t *testing.T) *Env {
	t.Helper()
	e := New(t)
	var err error
	e.DNS, err = dnstest.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.DNS.Close() })
	e.DNS.SetDefaultAddrs(netip.MustParseAddr("127.0.0.1"))

	httpLn := ListenLoopback(t)
	hs := &http.Server{Handler: http.HandlerFunc(e.ServeHTTP01)}
	go hs.Serve(httpLn)
	t.Cleanup(func() { hs.Close() })
	e.HTTP01Port = Port(httpLn)

	alpnLn := ListenLoopback(t)
	e.TLSALPN01Port = Port(alpnLn)
	go e.serveTLSALPN01(tls.NewListener(alpnLn, &tls.Config{
		NextProtos: []string{"acme-tls/1"},
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			e.alpnMu.Lock()
			defer e.alpnMu.Unlock()
			return e.alpnCert[h.ServerName], nil
		},
	}))
	return e
}

// Connect points e at the ACME server at base whose root is rootPEM: e's
// HTTP client trusts that root.
func (e *Env) Connect(base string, rootPEM []byte) {
	e.t.Helper()
	e.Base = base
	e.Roots = x509.NewCertPool()
	if !e.Roots.AppendCertsFromPEM(rootPEM) {
		e.t.Fatal("no root PEM")
	}
	e.HTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.Roots}, MaxIdleConnsPerHost: 64,
	}}
	e.t.Cleanup(e.HTTP.CloseIdleConnections)
}

// ServeHTTP01 answers http-01 validations: the key authorization of a
// token in Tokens, or a redirect to the URL of a token in Redirect.
func (e *Env) ServeHTTP01(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.URL.Path, "/.well-known/acme-challenge/")
	if to, ok := e.Redirect.Load(token); ok {
		http.Redirect(w, r, to.(string), http.StatusFound)
		return
	}
	if v, ok := e.Tokens.Load(token); ok {
		io.WriteString(w, v.(string))
		return
	}
	http.NotFound(w, r)
}

// serveTLSALPN01 completes the handshakes of tls-alpn-01 validations
// until ln is closed.
func (e *Env) serveTLSALPN01(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}()
	}
}
