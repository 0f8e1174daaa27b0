// SPDX-License-Identifier: Apache-2.0

package web

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

// ConnLimits are the live settings of the caps.
type ConnLimits struct {
	// PerIP caps the open connections of one client (a
	// [ratelimit.IPPrefix]), Total all of them; 0 turns a cap off.
	PerIP, Total int
	// FirstRequest closes a connection that has sent no request by then.
	FirstRequest time.Duration
	// Exempt are the addresses PerIP does not apply to: the whitelist and
	// the trusted proxies.
	Exempt []netip.Prefix
}

// ConnObserver hears what the caps do (web/admin.Metrics).
type ConnObserver interface {
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

// ConnLimiter counts the open connections of a listener.
type ConnLimiter struct {
	limits atomic.Pointer[ConnLimits]
	obs    ConnObserver

	mu    sync.Mutex
	perIP map[netip.Prefix]int // by ratelimit.IPPrefix: an IPv4 address, an IPv6 /64
	total int
}

// NewConnLimiter returns the caps l, telling obs what they do.
func NewConnLimiter(l ConnLimits, obs ConnObserver) *ConnLimiter {
	c := &ConnLimiter{obs: obs, perIP: map[netip.Prefix]int{}}
	c.Set(l)
	return c
}

// Set installs l (at start and on reload); open connections stay.
func (c *ConnLimiter) Set(l ConnLimits) { c.limits.Store(&l) }

// Open returns the number of connections open on c's listeners.
func (c *ConnLimiter) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// admit counts a new connection from peer, or says why it is refused.
func (c *ConnLimiter) admit(peer netip.Addr) (key netip.Prefix, refused string) {
	l := c.limits.Load()
	key = ratelimit.IPPrefix(peer)
	perIP := l.PerIP > 0 && !inPrefixes(l.Exempt, peer.Unmap())
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case l.Total > 0 && c.total >= l.Total:
		return key, refusedTotal
	case perIP && c.perIP[key] >= l.PerIP:
		return key, refusedPerIP
	}
	c.total++
	c.perIP[key]++
	return key, ""
}

// release uncounts a connection of key.
func (c *ConnLimiter) release(key netip.Prefix) {
	c.mu.Lock()
	c.total--
	if n := c.perIP[key] - 1; n > 0 {
		c.perIP[key] = n
	} else {
		delete(c.perIP, key)
	}
	c.mu.Unlock()
}

// Listener applies c to the connections ln accepts. Their first-request
// deadline stops at a request only under an http.Server given to
// [NoteRequests].
func (c *ConnLimiter) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, c: c}
}

type limitedListener struct {
	net.Listener
	c *ConnLimiter
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
		cc.timer = time.AfterFunc(ln.c.limits.Load().FirstRequest, cc.noRequest)
		return cc, nil
	}
}

// countedConn is an admitted connection, uncounted when it closes.
type countedConn struct {
	net.Conn
	c         *ConnLimiter
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

// NoteRequests makes each request of hs stop its connection's
// first-request deadline: it wraps hs.Handler and sets hs.ConnContext.
func NoteRequests(hs *http.Server) {
	hs.Handler = requestSeen(hs.Handler)
	hs.ConnContext = connContext
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
