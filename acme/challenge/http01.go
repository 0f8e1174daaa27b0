package challenge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	v    *Validator
	dial DialFunc
	// connected is set once any connection has been made, to tell the
	// two kinds of timeout apart.
	connected atomic.Bool

	mu sync.Mutex
	// resolving is the host being resolved, if any, so that a timeout
	// that strikes then is reported as a DNS timeout: the HTTP client
	// returns on the deadline without waiting for its dialer.
	resolving string
}

// setResolving records the host being resolved ("" when done).
func (f *httpFetch) setResolving(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolving = host
}

// resolvingHost returns the host being resolved, or "".
func (f *httpFetch) resolvingHost() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resolving
}

// validateHTTP01 fetches http://<identifier>/.well-known/acme-challenge/<token>
// and compares the body with the key authorization (RFC 8555 §8.3; RFC 8738
// §4 for IP addresses). Redirects are followed under the policy of
// checkRedirect.
func (v *Validator) validateHTTP01(ctx context.Context, t target, req acme.ValidationRequest) *acme.Problem {
	u := "http://" + t.urlHost() + "/.well-known/acme-challenge/" + req.Token
	f := &httpFetch{v: v, dial: v.dialer()}
	tr := &http.Transport{
		Proxy:       nil, // never go through a proxy
		DialContext: f.dialContext,
		// Like Let's Encrypt, an https redirect target's certificate is
		// not verified: http-01 proves control of the name via the
		// content, not via the certificate.
		TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true,
			MinVersion:         tls.VersionTLS12,
		},
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: v.checkRedirect}

	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return acme.Internal(fmt.Errorf("challenge: http-01 request for %q: %w", u, err))
	}
	// The Host header is the identifier (from the URL): no port, IPv6
	// bracketed.
	hreq.Header.Set("User-Agent", userAgent)
	hreq.Header.Set("Accept", "*/*")
	resp, err := client.Do(hreq)
	if err != nil {
		// The URL of a url.Error is the one that failed, which may be
		// a redirect target.
		var ue *url.Error
		if errors.As(err, &ue) && ue.URL != "" {
			u = shortURL(ue.URL)
		}
		if host := f.resolvingHost(); host != "" && isTimeout(err) {
			return dnsProblem("A/AAAA", host, err)
		}
		return connProblem("Fetching "+u, err, f.connected.Load())
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if resp.StatusCode != http.StatusOK {
		return acme.Unauthorized("Invalid response from %s: %d", final, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, v.cfg.MaxBodyBytes+1))
	if err != nil {
		return connProblem("Reading the response from "+final, err, true)
	}
	if int64(len(body)) > v.cfg.MaxBodyBytes {
		return acme.Unauthorized("Invalid response from %s: body longer than %d bytes, starting %s",
			final, v.cfg.MaxBodyBytes, excerpt(body))
	}
	// RFC 8555 §8.3: "The server SHOULD ignore whitespace characters at
	// the end of the body." Surrounding whitespace is trimmed, as Let's
	// Encrypt does.
	if strings.TrimSpace(string(body)) != req.KeyAuthorization {
		return acme.Unauthorized("Invalid response from %s: the body %s is not the key authorization",
			final, excerpt(body))
	}
	return nil
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

// dialContext is the HTTP transport's dialer: it resolves the host through
// the configured resolver (a failure is a dns problem) and tries its
// addresses in order.
func (f *httpFetch) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n, err := f.v.dialPort(port)
	if err != nil {
		return nil, err
	}
	f.setResolving(host)
	addrs, p := f.v.resolve(ctx, host)
	f.setResolving("")
	if p != nil {
		return nil, &problemError{p}
	}
	conn, err := dialAny(ctx, f.dial, addrs, n)
	if err != nil {
		return nil, err
	}
	f.connected.Store(true)
	return conn, nil
}

// shortURL returns u, truncated for quoting in a problem detail.
func shortURL(u string) string {
	if len(u) > maxURLInDetail {
		return strings.ToValidUTF8(u[:maxURLInDetail], "") + "..."
	}
	return u
}
