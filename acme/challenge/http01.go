// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weir-pki/weir/acme"
)

const (
	// maxRedirects is how many redirects http-01 follows, as Let's
	// Encrypt does.
	maxRedirects = 10
	// maxHeaderBytes bounds the response headers of an http-01 fetch.
	maxHeaderBytes = 16 << 10
	// userAgent is sent with http-01 requests.
	userAgent = "weir-validator (RFC 8555 http-01)"
	// maxURLInDetail bounds a redirect URL quoted in a problem detail.
	maxURLInDetail = 256
)

// httpFetch is the state of one http-01 validation.
type httpFetch struct {
	v      *Validator
	egress *Egress
	dial   DialFunc
	// connected is set once any connection has been made, to tell the
	// two kinds of timeout apart.
	connected bool
}

// maxInformational bounds the 1xx responses skipped before the final one,
// as net/http's Transport does.
const maxInformational = 5

// validateHTTP01 fetches http://<identifier>/.well-known/acme-challenge/<token>
// and compares the body with the key authorization (RFC 8555 §8.3; RFC 8738
// §4 for IP addresses). Redirects are followed under the policy of
// checkRedirect.
//
// Each URL is fetched over a connection of its own, closed after the
// response, so the fetch does not go through net/http's Client and
// Transport, whose connection pool and per-connection goroutines were a
// large part of a validation's cost for nothing. The request is written by
// net/http's Request.Write and the response read by its ReadResponse, the
// same HTTP/1.1 code the Transport uses.
func (v *Validator) validateHTTP01(ctx context.Context, t target, req acme.ValidationRequest) *acme.Problem {
	u := "http://" + t.urlHost() + "/.well-known/acme-challenge/" + req.Token
	eg, dial := v.egressDialer()
	f := &httpFetch{v: v, egress: eg, dial: dial}
	var via []*http.Request
	for {
		hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return acme.Internal(fmt.Errorf("challenge: http-01 request for %q: %w", u, err))
		}
		// The Host header is the identifier (from the URL): no port, IPv6
		// bracketed.
		hreq.Header.Set("User-Agent", userAgent)
		hreq.Header.Set("Accept", "*/*")
		hreq.Close = true // Connection: close
		if len(via) > 0 {
			if err := v.checkRedirect(hreq, via); err != nil {
				return connProblem("Fetching "+shortURL(u), err, f.connected)
			}
		}
		own := t.isHost(hreq.URL.Hostname())
		resp, body, err := f.get(ctx, hreq)
		if err != nil {
			if !own {
				err = withoutContent(err)
			}
			return connProblem("Fetching "+shortURL(u), err, f.connected)
		}
		if loc := resp.Header.Get("Location"); loc != "" && isRedirect(resp.StatusCode) {
			next, err := hreq.URL.Parse(loc)
			if err != nil {
				err = fmt.Errorf("failed to parse Location header %q: %v", loc, err)
				if !own {
					err = fmt.Errorf("failed to parse the Location header (%d bytes, not shown: the host is not the identifier)", len(loc))
				}
				return connProblem("Fetching "+shortURL(u), err, true)
			}
			via = append(via, hreq)
			u = next.String()
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return acme.Unauthorized("Invalid response from %s: %d", u, resp.StatusCode)
		}
		return checkHTTP01Body(u, t, own, body, v.cfg.MaxBodyBytes, req.KeyAuthorization)
	}
}

// checkHTTP01Body compares the body of the final response, fetched from
// u, with the key authorization. own says whether u's host is the
// identifier itself: only then does a problem quote the body. A body from
// another host, reached by a redirect the applicant chose, may be a reply
// of a service inside weir's network, so a problem says only its size.
func checkHTTP01Body(u string, t target, own bool, body []byte, maxBytes int64, keyAuth string) *acme.Problem {
	if int64(len(body)) > maxBytes {
		if !own {
			return acme.Unauthorized("Invalid response from %s: the body is longer than %d bytes (not shown: %s is not %s)",
				u, maxBytes, hostOf(u), t.host())
		}
		return acme.Unauthorized("Invalid response from %s: body longer than %d bytes, starting %s",
			u, maxBytes, excerpt(body))
	}
	// RFC 8555 §8.3: "The server SHOULD ignore whitespace characters at
	// the end of the body." Surrounding whitespace is trimmed, as Let's
	// Encrypt does.
	if strings.TrimSpace(string(body)) == keyAuth {
		return nil
	}
	if !own {
		return acme.Unauthorized("Invalid response from %s: the body (%d bytes) is not the key authorization (not shown: %s is not %s)",
			u, len(body), hostOf(u), t.host())
	}
	return acme.Unauthorized("Invalid response from %s: the body %s is not the key authorization", u, excerpt(body))
}

// hostOf returns the host of URL u for a problem detail, or "the host"
// when u does not parse.
func hostOf(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" {
		return pu.Hostname()
	}
	return "the host"
}

// errContent replaces an error that quoted what a peer sent (a malformed
// status line, say). It wraps nothing: connProblem describes an error by
// the innermost of its chain.
var errContent = errors.New("the response is not valid HTTP/1.x (what was received is not shown: the host is not the identifier)")

// withoutContent returns err, or, when it may quote the peer's bytes
// (net/http's parse errors do, up to a whole line), an error that does
// not. Network errors, timeouts and TLS errors carry no content.
func withoutContent(err error) error {
	var re *responseError
	if errors.As(err, &re) {
		return errContent
	}
	return err
}

// responseError is a response that could not be parsed.
type responseError struct{ err error }

// Error implements error.
func (e *responseError) Error() string { return e.err.Error() }

// Unwrap returns the parse error.
func (e *responseError) Unwrap() error { return e.err }

// isRedirect reports whether code is a redirect that is followed, as
// net/http's Client follows them.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// get sends req over a new connection (TLS for https, without verifying
// the certificate: like Let's Encrypt, http-01 proves control of the name
// by the content, not the certificate) and reads the response: headers of
// at most maxHeaderBytes and, for a 200, at most MaxBodyBytes+1 bytes of
// body. The connection is closed before get returns, and the deadline of
// ctx bounds every step.
func (f *httpFetch) get(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	port := req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	conn, err := f.dialContext(ctx, req.URL.Hostname(), port)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Cancellation interrupts any read or write in progress.
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })()
	if req.URL.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{
			InsecureSkipVerify: true,
			MinVersion:         tls.VersionTLS12,
			ServerName:         req.URL.Hostname(),
		})
		if err := tc.HandshakeContext(ctx); err != nil {
			var rh tls.RecordHeaderError
			if errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
				return nil, nil, errors.New("server gave HTTP response to HTTPS client")
			}
			return nil, nil, err
		}
		conn = tc
	}
	bufs := fetchBufs.Get().(*fetchBuffers)
	defer bufs.release()
	bufs.w.Reset(conn)
	if err := req.Write(bufs.w); err != nil {
		return nil, nil, err
	}
	if err := bufs.w.Flush(); err != nil {
		return nil, nil, err
	}
	// The headers are read through a budget of maxHeaderBytes, lifted for
	// the body, which has its own bound.
	lr := &io.LimitedReader{R: conn, N: maxHeaderBytes}
	br := bufs.r
	br.Reset(lr)
	var resp *http.Response
	for i := 0; ; i++ {
		resp, err = http.ReadResponse(br, req)
		if err != nil {
			if lr.N <= 0 {
				return nil, nil, fmt.Errorf("response headers longer than %d bytes", maxHeaderBytes)
			}
			if isTimeout(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, nil, err
			}
			return nil, nil, &responseError{err}
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if i == maxInformational {
			return nil, nil, fmt.Errorf("more than %d informational (1xx) responses", maxInformational)
		}
	}
	lr.N = math.MaxInt64
	// The body is not closed: closing a response body drains it, and the
	// connection is closed instead. What is returned has no body: the
	// reader behind it goes back to the pool.
	if resp.StatusCode != http.StatusOK {
		resp.Body = http.NoBody
		return resp, nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.v.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the response: %w", err)
	}
	resp.Body = http.NoBody
	return resp, body, nil
}

// fetchBuffers are the buffers one fetch writes its request and reads its
// response through, pooled: allocating them (net/http's Request.Write
// makes a 4 KiB writer unless given a buffered one) was most of what a
// validation allocated.
type fetchBuffers struct {
	w *bufio.Writer
	r *bufio.Reader
}

var fetchBufs = sync.Pool{New: func() any {
	return &fetchBuffers{w: bufio.NewWriterSize(nil, 1024), r: bufio.NewReaderSize(nil, 4096)}
}}

// release detaches the buffers from the connection and pools them.
func (b *fetchBuffers) release() {
	b.w.Reset(nil)
	b.r.Reset(nil)
	fetchBufs.Put(b)
}

// checkRedirect is the redirect policy of http-01: at most maxRedirects
// redirects, only to http or https URLs on the standard ports (or the
// configured lab ports), to a host that is a DNS name or an IP address.
// Violations are connection problems, as in Let's Encrypt.
func (v *Validator) checkRedirect(req *http.Request, via []*http.Request) error {
	from := via[len(via)-1].URL.String()
	to := shortURL(req.URL.String())
	if len(via) > maxRedirects {
		return &problemError{acme.NewProblem(acme.ProbConnection,
			"Too many redirects (more than %d) fetching %s", maxRedirects, via[0].URL)}
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return &problemError{acme.NewProblem(acme.ProbConnection,
			"Invalid redirect from %s to %q: only http and https URLs are followed", from, to)}
	}
	if port := req.URL.Port(); port != "" && !v.redirectPortAllowed(port) {
		return &problemError{acme.NewProblem(acme.ProbConnection,
			"Invalid redirect from %s to %q: only ports 80 and 443 are followed, not %s", from, to, port)}
	}
	host := req.URL.Hostname()
	if ip, err := netip.ParseAddr(host); (err != nil || ip.Zone() != "") && !isDNSName(host) {
		return &problemError{acme.NewProblem(acme.ProbConnection,
			"Invalid redirect from %s to %q: the host is neither a DNS name nor an IP address", from, to)}
	}
	return nil
}

// redirectPortAllowed reports whether a redirect may name port explicitly:
// 80 and 443, and in lab mode the configured ports.
func (v *Validator) redirectPortAllowed(port string) bool {
	n, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	return n == 80 || n == 443 || n == v.cfg.HTTPPort || n == v.cfg.TLSALPNPort
}

// dialPort maps the port of a URL to the port dialed: 80 becomes HTTPPort
// and 443 becomes TLSALPNPort (lab mode); others stay.
func (v *Validator) dialPort(port string) (int, error) {
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, fmt.Errorf("invalid port %q", port)
	}
	switch n {
	case 80:
		return v.cfg.HTTPPort, nil
	case 443:
		return v.cfg.TLSALPNPort, nil
	}
	return n, nil
}

// dialContext resolves host through the configured resolver (a failure is
// a dns problem) and connects to port (mapped by dialPort) on its
// addresses in order.
func (f *httpFetch) dialContext(ctx context.Context, host, port string) (net.Conn, error) {
	n, err := f.v.dialPort(port)
	if err != nil {
		return nil, err
	}
	addrs, p := f.v.resolve(ctx, f.egress, host)
	if p != nil {
		return nil, &problemError{p}
	}
	conn, err := dialAny(ctx, f.dial, addrs, n)
	if err != nil {
		return nil, err
	}
	f.connected = true
	return conn, nil
}

// shortURL returns u, truncated for quoting in a problem detail.
func shortURL(u string) string {
	if len(u) > maxURLInDetail {
		return strings.ToValidUTF8(u[:maxURLInDetail], "") + "..."
	}
	return u
}
