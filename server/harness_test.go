// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/dnstest"
)

// testEnv is a whole weir server on loopback with a DNS server and
// http-01 / tls-alpn-01 responders for the test's names.
type testEnv struct {
	t    *testing.T
	cfg  Config
	srv  *Server
	base string
	// artefacts is the base URL of the public artefacts that the
	// certificates name: the plain-HTTP listener's, unless a test turned
	// it off.
	artefacts string
	dns       *dnstest.Server
	roots     *x509.CertPool
	http      *http.Client
	// adminURL is the admin listener's base URL ("" when admin is off);
	// its token is in adminTokenPath(cfg).
	adminURL string
	// stop stops the server (once; the test's end calls it too).
	stop func()

	tokens   sync.Map // http-01 token -> key authorization
	redirect sync.Map // http-01 token -> the URL its challenge path redirects to
	alpnMu   sync.Mutex
	alpnCert map[string]*tls.Certificate // SNI -> challenge cert
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// startEnv starts weir with a test configuration that mutate may adjust.
func startEnv(t *testing.T, mutate func(*Config)) *testEnv {
	t.Helper()
	return startEnvLog(t, mutate, io.Discard)
}

// startEnvLog is startEnv with the server's log written to logw.
func startEnvLog(t *testing.T, mutate func(*Config), logw io.Writer) *testEnv {
	t.Helper()
	e := &testEnv{t: t, alpnCert: map[string]*tls.Certificate{}}
	var err error
	e.dns, err = dnstest.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.dns.Close() })
	e.dns.SetDefaultAddrs(netipMust("127.0.0.1"))

	httpLn := listenLoopback(t)
	hs := &http.Server{Handler: http.HandlerFunc(e.serveHTTP01)}
	go hs.Serve(httpLn)
	t.Cleanup(func() { hs.Close() })

	alpnLn := tls.NewListener(listenLoopback(t), &tls.Config{
		NextProtos: []string{"acme-tls/1"},
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			e.alpnMu.Lock()
			defer e.alpnMu.Unlock()
			return e.alpnCert[h.ServerName], nil
		},
	})
	go func() {
		for {
			c, err := alpnLn.Accept()
			if err != nil {
				return
			}
			go func() {
				c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()

	ln, adminLn, plainLn := listenLoopback(t), listenLoopback(t), listenLoopback(t)
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Server.Listen = ln.Addr().String()
	cfg.Server.HTTP.Listen = plainLn.Addr().String()
	cfg.Admin.Listen = adminLn.Addr().String()
	cfg.Challenges.HTTP01.Port = port(httpLn)
	cfg.Challenges.TLSALPN01.Port = port(alpnLn)
	cfg.Challenges.DNSResolver = e.dns.Addr()
	cfg.Challenges.Timeout = 5 * time.Second
	cfg.Log.Level = "warn"
	cfg.CA.Policy.AllowedIPRanges = []string{"127.0.0.0/8"}
	// The system tests read the CRL right after a revocation: made on
	// read. TestCRLUpdater runs the background updater.
	cfg.CA.CRLDelay = 0
	// The core tests run with every limit off; the rate-limit tests turn
	// on what they exercise.
	rl := &cfg.RateLimiting
	rl.Global.Enabled, rl.AccountCreation.Enabled, rl.OrderCreation.Enabled = false, false, false
	rl.DuplicateCertificate.Enabled, rl.FailedValidation.Enabled = false, false
	rl.PendingAuthorizations.Enabled, rl.RegisteredDomain.Enabled = false, false
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	// The running server watches this file, as weir serve -config does.
	e.srv, err = New(t.Context(), cfg, Options{ConfigFile: filepath.Join(cfg.DataDir, "weir.yaml"), Log: logw})
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
	e.base = e.srv.BaseURL()
	e.artefacts = ArtefactURL(cfg)
	e.roots = x509.NewCertPool()
	if !e.roots.AppendCertsFromPEM(e.srv.RootPEM()) {
		t.Fatal("no root PEM")
	}
	e.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.roots}, MaxIdleConnsPerHost: 64,
	}}
	t.Cleanup(e.http.CloseIdleConnections)
	return e
}

func (e *testEnv) serveHTTP01(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.URL.Path, "/.well-known/acme-challenge/")
	if to, ok := e.redirect.Load(token); ok {
		http.Redirect(w, r, to.(string), http.StatusFound)
		return
	}
	if v, ok := e.tokens.Load(token); ok {
		io.WriteString(w, v.(string))
		return
	}
	http.NotFound(w, r)
}

// client returns an x/crypto/acme client for key.
func (e *testEnv) client(key crypto.Signer) *xacme.Client {
	return &xacme.Client{Key: key, DirectoryURL: e.base + "/directory", HTTPClient: e.http, UserAgent: "weir-e2e"}
}

// solve makes the challenge of type typ of the authorization at url pass
// and waits for the authorization to be valid.
func (e *testEnv) solve(ctx context.Context, c *xacme.Client, authzURL, typ string) {
	e.t.Helper()
	a, err := c.GetAuthorization(ctx, authzURL)
	if err != nil {
		e.t.Fatal(err)
	}
	if a.Status == xacme.StatusValid {
		return
	}
	var ch *xacme.Challenge
	for _, x := range a.Challenges {
		if x.Type == typ {
			ch = x
		}
	}
	if ch == nil {
		e.t.Fatalf("authorization %s has no %s challenge", a.Identifier.Value, typ)
	}
	e.publish(c, a, ch)
	if _, err := c.Accept(ctx, ch); err != nil {
		e.t.Fatalf("accept %s: %v", typ, err)
	}
	if _, err := c.WaitAuthorization(ctx, authzURL); err != nil {
		e.t.Fatalf("wait authorization %s (%s): %v", a.Identifier.Value, typ, err)
	}
}

// publish makes the responders answer challenge ch of authorization a
// as c's account must: a validation of it then passes.
func (e *testEnv) publish(c *xacme.Client, a *xacme.Authorization, ch *xacme.Challenge) {
	e.t.Helper()
	switch ch.Type {
	case "http-01":
		ka, _ := c.HTTP01ChallengeResponse(ch.Token)
		e.tokens.Store(ch.Token, ka)
	case "dns-01":
		rec, _ := c.DNS01ChallengeRecord(ch.Token)
		e.dns.SetTXT("_acme-challenge."+a.Identifier.Value, rec)
	case "dns-account-01":
		rec, _ := c.DNS01ChallengeRecord(ch.Token)
		e.dns.SetTXT(accountChallengeName(string(c.KID), a.Identifier.Value), rec)
	case "dns-persist-01":
		// Nothing to do: the record persists, published before.
	case "tls-alpn-01":
		cert, err := c.TLSALPN01ChallengeCert(ch.Token, a.Identifier.Value)
		if err != nil {
			e.t.Fatal(err)
		}
		e.alpnMu.Lock()
		e.alpnCert[a.Identifier.Value] = &cert
		e.alpnMu.Unlock()
	}
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
		c.DataDir, c.Server.ExternalURL = e.cfg.DataDir, e.base
		if c.Server.HTTP.Listen != "" {
			c.Server.HTTP.ExternalURL = e.artefacts
		}
	})
	old, oldPlain := strings.TrimPrefix(e.base, "https://"), strings.TrimPrefix(e.artefacts, "http://")
	n.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: n.roots},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			switch {
			case addr == old:
				addr = n.cfg.Server.Listen
			case addr == oldPlain && n.cfg.Server.HTTP.Listen != "":
				addr = n.cfg.Server.HTTP.Listen
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	t.Cleanup(n.http.CloseIdleConnections)
	return n
}

// rawResponse is a response to a hand-made request.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// problem decodes a problem document body.
func (r rawResponse) problem() (typ string, detail string) {
	var p struct{ Type, Detail string }
	_ = json.Unmarshal(r.body, &p)
	return p.Type, p.Detail
}

// nonce fetches a fresh nonce.
func (e *testEnv) nonce() string {
	e.t.Helper()
	res, err := e.http.Head(e.base + "/acme/new-nonce")
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return res.Header.Get("Replay-Nonce")
}

// signOpts shape a hand-made JWS.
type signOpts struct {
	kid   string // "" means embed the JWK
	nonce string // "" means fetch a fresh one
	url   string // "" means the request URL
	alg   jose.SignatureAlgorithm
}

// sign makes a flattened JWS over payload.
func (e *testEnv) sign(key crypto.Signer, url string, payload []byte, o signOpts) []byte {
	e.t.Helper()
	if o.nonce == "" {
		o.nonce = e.nonce()
	}
	if o.url == "" {
		o.url = url
	}
	if o.alg == "" {
		o.alg = algFor(key)
	}
	opts := &jose.SignerOptions{ExtraHeaders: map[jose.HeaderKey]any{"nonce": o.nonce, "url": o.url}}
	sk := jose.SigningKey{Algorithm: o.alg, Key: key}
	if o.kid != "" {
		sk.Key = jose.JSONWebKey{Key: key, KeyID: o.kid}
	} else {
		opts.EmbedJWK = true
	}
	signer, err := jose.NewSigner(sk, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	return []byte(jws.FullSerialize())
}

func algFor(key crypto.Signer) jose.SignatureAlgorithm {
	switch k := key.Public().(type) {
	case *rsa.PublicKey:
		return jose.RS256
	case ed25519.PublicKey:
		return jose.EdDSA
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize == 384 {
			return jose.ES384
		}
	}
	return jose.ES256
}

// post sends a body to url with the given content type.
func (e *testEnv) post(url, contentType string, body []byte) rawResponse {
	e.t.Helper()
	res, err := e.http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return rawResponse{status: res.StatusCode, header: res.Header, body: b}
}

// postJWS signs payload and posts it.
func (e *testEnv) postJWS(key crypto.Signer, url string, payload []byte, o signOpts) rawResponse {
	e.t.Helper()
	return e.post(url, "application/jose+json", e.sign(key, url, payload, o))
}

// postJWSAccept is postJWS with an Accept header.
func (e *testEnv) postJWSAccept(key crypto.Signer, url string, payload []byte, o signOpts, accept string) rawResponse {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodPost, url, bytes.NewReader(e.sign(key, url, payload, o)))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/jose+json")
	req.Header.Set("Accept", accept)
	res, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return rawResponse{status: res.StatusCode, header: res.Header, body: b}
}

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }
