// SPDX-License-Identifier: Apache-2.0

package web

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// EdgeConfig is the in-process global layer: a per-IP bucket checked on
// every ACME endpoint before any JWS or database work, and the rules for
// finding the real client IP.
type EdgeConfig struct {
	// Edge is the global per-IP limiter; nil disables the layer.
	Edge *ratelimit.Edge
	// Whitelist bypasses the IP-keyed limits.
	Whitelist []netip.Prefix
	// TrustedProxies are the only peers whose X-Forwarded-For or
	// Forwarded header is believed.
	TrustedProxies []netip.Prefix
	// HelpURL is sent as Link rel="help" on a 429.
	HelpURL string
	// Policy is the limit Edge enforces: a refusal's RateLimit-Policy and
	// RateLimit fields describe it, as the other layers' do theirs.
	Policy ratelimit.Limit
}

// SetEdge installs the global layer's settings (at start and on reload).
func (s *Server) SetEdge(c EdgeConfig) { s.edge.Store(&c) }

// inPrefixes reports whether a is in one of ps (the edge's whitelist and
// trusted proxies, the connection caps' exempt addresses).
func inPrefixes(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the real client address: the peer, unless the peer is a
// trusted proxy, in which case the forwarding headers are read from the
// right, skipping trusted proxies; the first untrusted address is the
// client.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	peer := ap.Addr().Unmap()
	ec := s.edge.Load()
	if ec == nil || len(ec.TrustedProxies) == 0 || !inPrefixes(ec.TrustedProxies, peer) {
		return peer
	}
	hops := forwardedFor(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHop(hops[i])
		if err != nil {
			break // a malformed hop: trust nothing further left
		}
		client = a
		if !inPrefixes(ec.TrustedProxies, a) {
			break
		}
	}
	return client
}

// forwardedFor lists the hops of X-Forwarded-For, or else of the "for="
// parameters of Forwarded (RFC 7239), left to right.
func forwardedFor(h http.Header) []string {
	var hops []string
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		for _, v := range xff {
			for _, part := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(part))
			}
		}
		return hops
	}
	for _, v := range h.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(k, "for") {
					hops = append(hops, strings.Trim(val, `"`))
				}
			}
		}
	}
	return hops
}

// parseHop reads one forwarded address: "1.2.3.4", "1.2.3.4:5",
// "[2001:db8::1]:443" or "2001:db8::1".
func parseHop(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, err
	}
	return a.Unmap(), nil
}

// edgeAllow runs the global layer for the client of rec. When the layer
// ran (it is enabled and the client is not whitelisted) its decision goes
// to obs as a LimiterEvent{Action: "global"}; a denial is also noted on
// the request's log line and, for its RateLimit fields, on its event. An allowed request with no observer installed
// costs no allocation here.
func (s *Server) edgeAllow(rec *statusRecorder, obs acme.Observer) error {
	ec := s.edge.Load()
	ip := rec.ip
	if ec == nil || ec.Edge == nil || inPrefixes(ec.Whitelist, ip) {
		return nil
	}
	now := time.Now()
	ok, retry := ec.Edge.Allow(ip, now.UnixMicro())
	_, nop := obs.(acme.NopObserver)
	if ok && nop {
		return nil
	}
	key := ratelimit.IPKey(ip)
	d := ratelimit.Decision{Allowed: ok, Limit: ratelimit.Global, Key: key, RetryAfter: retry, At: now, Policy: ec.Policy}
	if !ok {
		d.Denied = []ratelimit.Decision{d}
		rec.ev.Limiter = limits.DecisionSummary(d)
		// The refusal's RateLimit fields (quota.go), where the other
		// layers note theirs (limits.noteQuota).
		rec.ev.Quota = d
	}
	if !nop {
		// The Edge runs in process: there is no backend latency to report.
		rec.globalReq[0] = ratelimit.Request{Name: ratelimit.Global, Key: key}
		obs.Limiter(acme.LimiterEvent{Action: "global", Requests: rec.globalReq[:], Decision: d})
	}
	if ok {
		return nil
	}
	return limits.RateLimitedProblem(d, ec.HelpURL)
}
