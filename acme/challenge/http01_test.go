// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// challengePath is the http-01 path of the test token.
const challengePath = "/.well-known/acme-challenge/" + testToken

// serveKeyAuth answers every request with the key authorization.
func serveKeyAuth(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprint(w, testKeyAuth+"\r\n")
}

// redirectChain redirects the challenge path through /r/1 .. /r/n and
// serves the key authorization at /r/n: n redirects in all.
func redirectChain(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == challengePath {
			http.Redirect(w, r, "/r/1", http.StatusFound)
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if i < n {
			http.Redirect(w, r, "/r/"+strconv.Itoa(i+1), http.StatusMovedPermanently)
			return
		}
		serveKeyAuth(w, r)
	}
}

// redirectTo redirects the challenge path to target.
func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == challengePath {
			http.Redirect(w, r, target, http.StatusFound)
			return
		}
		http.NotFound(w, r)
	}
}

func TestHTTP01(t *testing.T) {
	dns := startDNS(t)
	dns.SetA("nx.test")
	const name = "example.test"
	url := "http://example.test" + challengePath
	tests := []struct {
		name    string
		handler http.HandlerFunc
		ident   acme.Identifier
		// port, when set, replaces the test server's port as HTTPPort.
		port    func(t *testing.T) int
		maxBody int64
		timeout time.Duration
		want    acme.ProblemType
		detail  string
	}{
		{name: "ok", handler: serveKeyAuth},
		{name: "ok with surrounding whitespace", handler: func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, " \n"+testKeyAuth+"\n\t ")
		}},
		{name: "wrong body", handler: func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "hello \"world\"")
		}, want: acme.ProbUnauthorized, detail: `Invalid response from ` + url + `: the body "hello \"world\""`},
		{name: "404", handler: http.NotFound,
			want: acme.ProbUnauthorized, detail: "Invalid response from " + url + ": 404"},
		{name: "500 with right body", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, testKeyAuth)
		}, want: acme.ProbUnauthorized, detail: ": 500"},
		{name: "redirect chain to another path", handler: redirectChain(3)},
		{name: "10 redirects", handler: redirectChain(10)},
		{name: "11 redirects", handler: redirectChain(11),
			want: acme.ProbConnection, detail: "Too many redirects (more than 10) fetching " + url},
		{name: "redirect to another name", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "other.test" && r.URL.Path == "/there" {
				serveKeyAuth(w, r)
				return
			}
			redirectTo("http://other.test/there")(w, r)
		}},
		{name: "redirect to ftp", handler: redirectTo("ftp://example.test/x"),
			want: acme.ProbConnection, detail: `to "ftp://example.test/x": only http and https`},
		{name: "redirect to port 8080", handler: redirectTo("http://example.test:8080/x"),
			want: acme.ProbConnection, detail: "only ports 80 and 443 are followed, not 8080"},
		{name: "redirect to NXDOMAIN", handler: redirectTo("http://nx.test/x"),
			want: acme.ProbDNS, detail: "no A/AAAA records for nx.test"},
		{name: "redirect to 3xx without location", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusFound)
		}, want: acme.ProbUnauthorized, detail: ": 302"},
		{name: "oversized body", handler: func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, testKeyAuth+strings.Repeat(" ", 200))
		}, maxBody: 100, want: acme.ProbUnauthorized, detail: "body longer than 100 bytes"},
		{name: "body at the limit", handler: serveKeyAuth, maxBody: int64(len(testKeyAuth) + 2)},
		{name: "default body limit", handler: func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, strings.Repeat("x", DefaultMaxBodyBytes+1))
		}, want: acme.ProbUnauthorized, detail: "body longer than 8192 bytes, starting \"xxxx"},
		{name: "connection refused", handler: serveKeyAuth, port: closedPort,
			want: acme.ProbConnection, detail: "Fetching " + url + ": Connection refused"},
		{name: "NXDOMAIN", handler: serveKeyAuth, ident: dnsIdent("nx.test"),
			want: acme.ProbDNS, detail: "DNS problem: no A/AAAA records for nx.test"},
		{name: "timeout", handler: func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, timeout: 300 * time.Millisecond, want: acme.ProbConnection, detail: "Timeout after connect"},
		{name: "asks to close the connection", handler: func(w http.ResponseWriter, r *http.Request) {
			if !r.Close || r.Header.Get("User-Agent") != userAgent || r.Header.Get("Accept") != "*/*" {
				http.Error(w, fmt.Sprintf("close %t, headers %v", r.Close, r.Header), http.StatusBadRequest)
				return
			}
			serveKeyAuth(w, r)
		}},
		{name: "chunked body", handler: func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, testKeyAuth[:10])
			w.(http.Flusher).Flush()
			fmt.Fprint(w, testKeyAuth[10:])
		}},
		{name: "informational responses first", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			serveKeyAuth(w, r)
		}},
		{name: "too many informational responses", handler: func(w http.ResponseWriter, r *http.Request) {
			for range 6 {
				w.WriteHeader(http.StatusEarlyHints)
			}
			serveKeyAuth(w, r)
		}, want: acme.ProbConnection, detail: "more than 5 informational (1xx) responses"},
		{name: "oversized headers", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Filler", strings.Repeat("x", maxHeaderBytes))
			serveKeyAuth(w, r)
		}, want: acme.ProbConnection, detail: "Fetching " + url + ": Error getting validation data: response headers longer than 16384 bytes"},
		{name: "headers just under the limit", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Filler", strings.Repeat("x", maxHeaderBytes-200))
			serveKeyAuth(w, r)
		}},
		{name: "redirect with an unparsable location", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://[::1/x")
			w.WriteHeader(http.StatusFound)
		}, want: acme.ProbConnection, detail: `failed to parse Location header "http://[::1/x"`},
		{name: "ip identifier", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "127.0.0.1" {
				http.Error(w, "bad host "+r.Host, http.StatusBadRequest)
				return
			}
			serveKeyAuth(w, r)
		}, ident: ipIdent("127.0.0.1")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hosts sync.Map
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hosts.Store(r.Host, true)
				tc.handler(w, r)
			}))
			defer srv.Close()
			port := portOf(t, srv.Listener.Addr().String())
			if tc.port != nil {
				port = tc.port(t)
			}
			v := newValidator(t, dns, Config{HTTPPort: port, MaxBodyBytes: tc.maxBody, Timeout: tc.timeout})
			ident := tc.ident
			if ident == (acme.Identifier{}) {
				ident = dnsIdent(name)
			}
			p := validate(t, v, request(acme.ChallengeHTTP01, ident))
			checkProblem(t, p, ident, tc.want, tc.detail)
			// The Host header never carries the lab port.
			hosts.Range(func(k, _ any) bool {
				if h := k.(string); strings.Contains(h, ":") {
					t.Errorf("Host header: got %q, want no port", h)
				}
				return true
			})
		})
	}
}

// TestHTTP01HTTPSRedirect follows a redirect to https, which dials
// TLSALPNPort in lab mode and does not verify the certificate.
func TestHTTP01HTTPSRedirect(t *testing.T) {
	dns := startDNS(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "secure.test" || r.URL.Path != "/final" {
			http.NotFound(w, r)
			return
		}
		serveKeyAuth(w, r)
	}))
	defer tlsSrv.Close()
	srv := httptest.NewServer(redirectTo("https://secure.test/final"))
	defer srv.Close()
	v := newValidator(t, dns, Config{
		HTTPPort:    portOf(t, srv.Listener.Addr().String()),
		TLSALPNPort: portOf(t, tlsSrv.Listener.Addr().String()),
	})
	ident := dnsIdent("example.test")
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, "", "")

	// An https redirect to a server that only speaks TLS 1.1 fails the
	// handshake (the minimum is TLS 1.2).
	oldTLS := httptest.NewUnstartedServer(http.HandlerFunc(serveKeyAuth))
	oldTLS.TLS = &tls.Config{MaxVersion: tls.VersionTLS11}
	oldTLS.Config.ErrorLog = log.New(io.Discard, "", 0)
	oldTLS.StartTLS()
	defer oldTLS.Close()
	v = newValidator(t, dns, Config{
		HTTPPort:    portOf(t, srv.Listener.Addr().String()),
		TLSALPNPort: portOf(t, oldTLS.Listener.Addr().String()),
	})
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, acme.ProbTLS, "Fetching https://secure.test/final: TLS error")

	// An https redirect to a plain HTTP server is a connection problem.
	v = newValidator(t, dns, Config{
		HTTPPort:    portOf(t, srv.Listener.Addr().String()),
		TLSALPNPort: portOf(t, srv.Listener.Addr().String()),
	})
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, acme.ProbConnection, "server gave HTTP response to HTTPS client")
}

// TestHTTP01LabPortRedirect accepts an absolute redirect that names the
// configured HTTP port explicitly.
func TestHTTP01LabPortRedirect(t *testing.T) {
	dns := startDNS(t)
	var port int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == challengePath {
			http.Redirect(w, r, "http://example.test:"+strconv.Itoa(port)+"/x", http.StatusFound)
			return
		}
		serveKeyAuth(w, r)
	}))
	defer srv.Close()
	port = portOf(t, srv.Listener.Addr().String())
	v := newValidator(t, dns, Config{HTTPPort: port})
	ident := dnsIdent("example.test")
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, "", "")
}

// TestHTTP01IPv6FirstFallback resolves to ::1 and 127.0.0.1 with the server
// only on 127.0.0.1: IPv6 is tried first and IPv4 after it fails.
func TestHTTP01IPv6FirstFallback(t *testing.T) {
	dns := startDNS(t)
	dns.SetA("dual.test", netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback())
	srv := httptest.NewServer(http.HandlerFunc(serveKeyAuth))
	defer srv.Close()
	port := portOf(t, srv.Listener.Addr().String())
	var mu sync.Mutex
	var dialed []string
	v := newValidator(t, dns, Config{HTTPPort: port})
	v.SetDialContext(func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		if strings.HasPrefix(addr, "[::1]") {
			return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("refused for the test")}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	})
	ident := dnsIdent("dual.test")
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, "", "")
	mu.Lock()
	defer mu.Unlock()
	want := []string{net.JoinHostPort("::1", strconv.Itoa(port)), net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	if fmt.Sprint(dialed) != fmt.Sprint(want) {
		t.Errorf("dialed: got %v, want %v", dialed, want)
	}
}

// TestHTTP01IPv6Identifier validates an IPv6 address against a server on
// [::1], with the Host header in brackets.
func TestHTTP01IPv6Identifier(t *testing.T) {
	dns := startDNS(t)
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var host atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host.Store(r.Host)
		serveKeyAuth(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	v := newValidator(t, dns, Config{HTTPPort: portOf(t, ln.Addr().String())})
	ident := ipIdent("::1")
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, "", "")
	if got, want := host.Load(), "[::1]"; got != want {
		t.Errorf("Host header: got %v, want %q", got, want)
	}
}

// TestHTTP01DialOverride sends every connection to the test server through
// a custom dialer, whatever the name resolves to.
func TestHTTP01DialOverride(t *testing.T) {
	dns := startDNS(t)
	dns.SetA("far.test", netip.MustParseAddr("192.0.2.1"))
	srv := httptest.NewServer(http.HandlerFunc(serveKeyAuth))
	defer srv.Close()
	var calls atomic.Int32
	v := newValidator(t, dns, Config{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			calls.Add(1)
			if addr != "192.0.2.1:80" {
				return nil, fmt.Errorf("unexpected dial of %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	})
	ident := dnsIdent("far.test")
	checkProblem(t, validate(t, v, request(acme.ChallengeHTTP01, ident)), ident, "", "")
	if got := calls.Load(); got != 1 {
		t.Errorf("dial calls: got %d, want 1", got)
	}
}
