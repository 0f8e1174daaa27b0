// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// TestPlainHTTPArtefacts: under the default configuration a certificate
// names http:// URLs on the plain-HTTP listener for its CRL and its
// issuer (RFC 5280 §4.2.1.13, §4.2.2.1); fetched over plain HTTP, GET and
// HEAD, they are the DER CRL that verifies with the intermediate and
// lists the certificate once revoked, and the intermediate it verifies
// with, with the ACME listener's caching headers. The plain listener
// serves nothing else: every ACME, health, admin or unknown path is a 404
// and carries no nonce, any other method a 405. The ACME listener still
// serves the same artefacts over HTTPS, at the URLs of the certificates
// issued before.
func TestPlainHTTPArtefacts(t *testing.T) {
	e := startEnv(t, nil)
	if !strings.HasPrefix(e.artefacts, "http://127.0.0.1:") {
		t.Fatalf("the artefacts' base URL is %s, want the plain-HTTP listener's", e.artefacts)
	}
	ctx, _, c, _ := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("plain.weir.test")...)
	leaf := e.VerifyChain(chain, "plain.weir.test")
	inter, err := x509.ParseCertificate(chain[1])
	if err != nil {
		t.Fatal(err)
	}
	crlURL, issuerURL := e.artefacts+"/ca/crl.der", e.artefacts+"/ca/intermediate.der"
	if dp := leaf.CRLDistributionPoints; len(dp) != 1 || dp[0] != crlURL {
		t.Errorf("CRL distribution points %v, want [%s]", dp, crlURL)
	}
	if aia := leaf.IssuingCertificateURL; len(aia) != 1 || aia[0] != issuerURL {
		t.Errorf("AIA caIssuers %v, want [%s]", aia, issuerURL)
	}
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatal(err)
	}

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		res := acmeenv.PlainGet(t, method, crlURL)
		if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pkix-crl" ||
			res.Header.Get("Cache-Control") != "public, max-age=300" {
			t.Fatalf("%s %s: %d %v", method, crlURL, res.Status, res.Header)
		}
		if method == http.MethodHead {
			if len(res.Body) != 0 || res.Header.Get("Content-Length") == "" {
				t.Errorf("HEAD %s: a body of %d bytes, Content-Length %q; want none and the GET's length", crlURL, len(res.Body), res.Header.Get("Content-Length"))
			}
			continue
		}
		crl, err := x509.ParseRevocationList(res.Body)
		if err != nil {
			t.Fatalf("the CRL at %s: %v", crlURL, err)
		}
		if err := crl.CheckSignatureFrom(inter); err != nil {
			t.Errorf("the CRL at %s does not verify with the intermediate: %v", crlURL, err)
		}
		if !acmeenv.CRLLists(crl, leaf.SerialNumber) {
			t.Errorf("the CRL at %s does not list the revoked certificate", crlURL)
		}
	}
	res := acmeenv.PlainGet(t, http.MethodGet, issuerURL)
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/pkix-cert" || !bytes.Equal(res.Body, inter.Raw) {
		t.Errorf("GET %s: %d %v, want the intermediate's DER", issuerURL, res.Status, res.Header)
	} else if err := leaf.CheckSignatureFrom(inter); err != nil {
		t.Errorf("the certificate does not verify with the intermediate at %s: %v", issuerURL, err)
	}
	for _, p := range []string{"/root.pem", "/crl/default", "/ca/issuer/default"} {
		if res := acmeenv.PlainGet(t, http.MethodGet, e.artefacts+p); res.Status != http.StatusOK {
			t.Errorf("GET %s on the plain-HTTP listener: %d, want 200", p, res.Status)
		}
	}

	// Nothing else.
	for _, p := range []string{"/", "/directory", "/acme/new-nonce", "/acme/new-account", "/acme/renewal-info/x",
		"/healthz", "/readyz", "/metrics", "/api/v1/crl", "/login", "/crl/none", "/crl/default/1", "/ca/crl.der/x"} {
		res := acmeenv.PlainGet(t, http.MethodGet, e.artefacts+p)
		if res.Status != http.StatusNotFound || res.Header.Get("Replay-Nonce") != "" {
			t.Errorf("GET %s on the plain-HTTP listener: %d (nonce %q), want 404 and no nonce", p, res.Status, res.Header.Get("Replay-Nonce"))
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if res := acmeenv.PlainGet(t, m, crlURL); res.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", m, crlURL, res.Status)
		}
	}
	if res := acmeenv.PlainGet(t, http.MethodPost, e.artefacts+"/acme/new-order"); res.Status != http.StatusNotFound {
		t.Errorf("POST /acme/new-order on the plain-HTTP listener: %d, want 404", res.Status)
	}

	// The ACME listener serves the same, over HTTPS, and ACME.
	for _, p := range []string{"/ca/crl.der", "/ca/intermediate.der", "/root.pem", "/directory"} {
		if res := e.Get(t, e.Base+p); res.Status != http.StatusOK {
			t.Errorf("GET %s on the ACME listener: %d, want 200", p, res.Status)
		}
	}
	if res := acmeenv.PlainGet(t, http.MethodGet, "http://"+strings.TrimPrefix(e.Base, "https://")+"/ca/crl.der"); res.Status != http.StatusBadRequest {
		t.Errorf("plain HTTP to the ACME listener: %d, want net/http's 400", res.Status)
	}
}

// TestPlainHTTPConnections: the plain-HTTP listener bounds its
// connections as the ACME listener does (server.connections): one beyond
// max-per-ip is refused at accept, and one that sends no request is
// closed after first-request-timeout.
func TestPlainHTTPConnections(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.Server.Connections.MaxPerIP = 2
		c.Server.Connections.FirstRequestTimeout = time.Second
	})
	addr := strings.TrimPrefix(e.artefacts, "http://")
	dial := func() (net.Conn, error) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, err
	}
	mustDial := func() net.Conn {
		t.Helper()
		c, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// get sends a request on c and reports whether it was answered 200.
	get := func(c net.Conn) bool {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET /root.pem HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
			return false
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	busy := mustDial()
	idleDialed := time.Now()
	idle := mustDial()
	if !get(busy) {
		t.Fatal("the first connection was not answered")
	}
	// The refusal is a reset at accept: when it arrives before the dialer
	// has seen its connection established (a loaded machine), the dial
	// itself fails with ECONNRESET.
	switch third, err := dial(); {
	case errors.Is(err, syscall.ECONNRESET):
	case err != nil:
		t.Fatalf("third connection: %v, want a reset or a connection that is not answered", err)
	case get(third):
		t.Error("a third connection from 127.0.0.1 with max-per-ip 2 was answered")
	}
	// The server's timer starts at accept, after idleDialed: the
	// connection cannot be closed less than 1 s after it, and with the
	// default first-request-timeout (10 s) it would still be open 9 s
	// after it, however the machine schedules the server.
	idle.SetReadDeadline(idleDialed.Add(9 * time.Second))
	_, err := io.Copy(io.Discard, idle)
	if acmeenv.IsTimeout(err) {
		t.Error("a connection without a request is open 9 s after it was dialed, with a first-request-timeout of 1 s")
	}
	if d := time.Since(idleDialed); d < time.Second {
		t.Errorf("a connection without a request was closed %v after it was dialed, before the first-request-timeout of 1 s", d)
	}
	if !get(busy) {
		t.Error("the connection that sent a request was closed by the first-request deadline")
	}
}
