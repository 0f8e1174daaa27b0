// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// Bounded connections on the ACME listener and on the plain-HTTP listener
// of the public artefacts (server.connections: each listener has the caps
// of its own, so a crowd of relying parties fetching CRLs never takes the
// ACME clients' share).
//
// A connection costs memory before it sends any request (its TLS state,
// and for HTTP/2 the server's connection with its buffers and two
// goroutines), and the per-IP global limit only ever sees requests: an
// HTTP/2 connection needs none. So the listener itself counts what is open,
// per client address and in all, and refuses (closes at once, before the
// TLS handshake) a connection beyond either cap; and a connection that has
// sent no request within first-request-timeout of its accept is closed,
// whatever protocol it speaks. Keep-alive connections between requests are
// closed after idle-timeout (net/http, HTTP/1.1 and HTTP/2).
//
// The client address here is the TCP peer: headers are not read yet. So a
// whitelisted address (rate-limiting.whitelist) and a trusted proxy
// (server.trusted-proxies), which carries many clients' connections, are
// exempt from max-per-ip, and counted in max-total like any other.

// connLimits are the live settings of the caps.
type connLimits struct {
	perIP, total int
	firstRequest time.Duration
	exempt       []netip.Prefix // the whitelist and the trusted proxies
}

// connObserver hears what the caps do (web/admin.Metrics).
type connObserver interface {
	ConnOpened()
	ConnClosed()
	ConnRefused(reason string)
	ConnTimedOut()
}

// The reasons a connection is refused, the label of
// weir_connections_refused_total.
const (
	refusedPerIP = "per-ip"
	refusedTotal = "total"
)

// connLimiter counts the open connections of a listener.
type connLimiter struct {
	limits atomic.Pointer[connLimits]
	obs    connObserver

	mu    sync.Mutex
	perIP map[netip.Prefix]int // by ratelimit.IPPrefix: an IPv4 address, an IPv6 /64
	total int
}

func newConnLimiter(l connLimits, obs connObserver) *connLimiter {
	c := &connLimiter{obs: obs, perIP: map[netip.Prefix]int{}}
	c.set(l)
	return c
}

// set installs l (at start and on reload); open connections stay.
func (c *connLimiter) set(l connLimits) { c.limits.Store(&l) }

// admit counts a new connection from peer, or says why it is refused.
func (c *connLimiter) admit(peer netip.Addr) (key netip.Prefix, refused string) {
	l := c.limits.Load()
	key = ratelimit.IPPrefix(peer)
	perIP := l.perIP > 0 && !inPrefixes(l.exempt, peer.Unmap())
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case l.total > 0 && c.total >= l.total:
		return key, refusedTotal
	case perIP && c.perIP[key] >= l.perIP:
		return key, refusedPerIP
	}
	c.total++
	c.perIP[key]++
	return key, ""
}

// release uncounts a connection of key.
func (c *connLimiter) release(key netip.Prefix) {
	c.mu.Lock()
	c.total--
	if n := c.perIP[key] - 1; n > 0 {
		c.perIP[key] = n
	} else {
		delete(c.perIP, key)
	}
	c.mu.Unlock()
}

// inPrefixes reports whether a is in one of ps.
func inPrefixes(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// listener applies c to the connections ln accepts.
func (c *connLimiter) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, c: c}
}

type limitedListener struct {
	net.Listener
	c *connLimiter
}

// Accept returns the next connection within the caps; one beyond them is
// closed at once and counted.
func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		nc, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		var peer netip.Addr
		if ap, err := netip.ParseAddrPort(nc.RemoteAddr().String()); err == nil {
			peer = ap.Addr()
		}
		key, refused := ln.c.admit(peer)
		if refused != "" {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset: no TIME_WAIT for the refused
			}
			nc.Close()
			ln.c.obs.ConnRefused(refused)
			continue
		}
		ln.c.obs.ConnOpened()
		cc := &countedConn{Conn: nc, c: ln.c, key: key}
		cc.timer = time.AfterFunc(ln.c.limits.Load().firstRequest, cc.noRequest)
		return cc, nil
	}
}

// countedConn is an admitted connection, uncounted when it closes.
type countedConn struct {
	net.Conn
	c         *connLimiter
	key       netip.Prefix
	timer     *time.Timer // the first-request deadline
	requested atomic.Bool
	closed    sync.Once
}

// noRequest closes the connection when its deadline passes before a
// request.
func (cc *countedConn) noRequest() {
	if cc.requested.Load() {
		return
	}
	cc.c.obs.ConnTimedOut()
	cc.Close()
}

// request notes that the connection has sent a request.
func (cc *countedConn) request() {
	if !cc.requested.Swap(true) {
		cc.timer.Stop()
	}
}

// Close closes the connection and uncounts it, once.
func (cc *countedConn) Close() error {
	err := cc.Conn.Close()
	cc.closed.Do(func() {
		cc.timer.Stop()
		cc.c.release(cc.key)
		cc.c.obs.ConnClosed()
	})
	return err
}

// connCtxKey is the request context's key of its countedConn.
type connCtxKey struct{}

// connContext is http.Server.ConnContext: it puts the countedConn under
// the TLS connection in the connection's context.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if cc, ok := c.(*countedConn); ok {
		return context.WithValue(ctx, connCtxKey{}, cc)
	}
	return ctx
}

// requestSeen wraps h: each request stops its connection's first-request
// deadline.
func requestSeen(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cc, ok := r.Context().Value(connCtxKey{}).(*countedConn); ok {
			cc.request()
		}
		h.ServeHTTP(w, r)
	})
}

// connLimitsOf derives the caps' live settings from cfg and the limiter's
// settings of the same configuration (its parsed whitelist and trusted
// proxies).
func connLimitsOf(cfg ConnectionsConfig, ls *limiterSettings) connLimits {
	exempt := append(append([]netip.Prefix(nil), ls.edge.Whitelist...), ls.edge.TrustedProxies...)
	return connLimits{perIP: cfg.MaxPerIP, total: cfg.MaxTotal, firstRequest: cfg.FirstRequestTimeout, exempt: exempt}
}

// publicHTTPServer bounds hs, the server of the ACME listener or of the
// plain-HTTP one, as cfg says: the idle and header limits, HTTP/2's, and
// the first-request deadline of connections from the connLimiter's
// listener.
func publicHTTPServer(hs *http.Server, cfg ConnectionsConfig) {
	hs.Handler = requestSeen(hs.Handler)
	hs.ConnContext = connContext
	hs.IdleTimeout = cfg.IdleTimeout
	hs.MaxHeaderBytes = cfg.MaxHeaderBytes
	hs.HTTP2 = &http.HTTP2Config{
		MaxConcurrentStreams: cfg.HTTP2MaxConcurrentStreams,
		// The RFC 9113 default of HPACK's table, which the client may
		// not raise.
		MaxDecoderHeaderTableSize: 4096,
		MaxEncoderHeaderTableSize: 4096,
		// A connection that stays silent while requests are under way is
		// pinged after 30 s, and closed 15 s later without an answer.
		SendPingTimeout: 30 * time.Second,
		PingTimeout:     15 * time.Second,
	}
}
