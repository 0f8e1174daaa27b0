// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/weir-pki/weir/web"
)

// ConnectionsConfig is server.connections: the bounds on the ACME
// listener's connections (web/connlimit.go). max-per-ip, max-total and
// first-request-timeout reload live; the others take effect at restart.
type ConnectionsConfig struct {
	// MaxPerIP caps the open connections of one client address (an IPv4
	// address, an IPv6 /64); 0 turns the cap off.
	MaxPerIP int `yaml:"max-per-ip"`
	// MaxTotal caps the listener's open connections; 0 turns it off.
	MaxTotal int `yaml:"max-total"`
	// FirstRequestTimeout closes a connection that has sent no request
	// by then (its TLS handshake included), HTTP/1.1 and HTTP/2 alike.
	FirstRequestTimeout time.Duration `yaml:"first-request-timeout"`
	// IdleTimeout closes a keep-alive connection with no request under
	// way for that long.
	IdleTimeout time.Duration `yaml:"idle-timeout"`
	// MaxHeaderBytes bounds a request's header (HTTP/1.1 and the
	// header list of HTTP/2).
	MaxHeaderBytes int `yaml:"max-header-bytes"`
	// HTTP2MaxConcurrentStreams caps the requests of one HTTP/2
	// connection at once.
	HTTP2MaxConcurrentStreams int `yaml:"http2-max-concurrent-streams"`
}

// defaultConnections are the defaults of server.connections
// (docs/operations.md says why).
func defaultConnections() ConnectionsConfig {
	return ConnectionsConfig{MaxPerIP: 256, MaxTotal: 4096, FirstRequestTimeout: 10 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10, HTTP2MaxConcurrentStreams: 100}
}

// validate checks the block.
func (c ConnectionsConfig) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.MaxPerIP < 0 {
		add("server.connections.max-per-ip: %d must not be negative (0 turns the cap off)", c.MaxPerIP)
	}
	if c.MaxTotal < 0 {
		add("server.connections.max-total: %d must not be negative (0 turns the cap off)", c.MaxTotal)
	}
	if c.MaxTotal > 0 && c.MaxPerIP > c.MaxTotal {
		add("server.connections.max-per-ip: %d is more than max-total (%d)", c.MaxPerIP, c.MaxTotal)
	}
	if c.FirstRequestTimeout < time.Second || c.FirstRequestTimeout > 5*time.Minute {
		add("server.connections.first-request-timeout: %s must be between 1s and 5m", c.FirstRequestTimeout)
	}
	if c.IdleTimeout < time.Second || c.IdleTimeout > time.Hour {
		add("server.connections.idle-timeout: %s must be between 1s and 1h", c.IdleTimeout)
	}
	if c.MaxHeaderBytes < 4<<10 || c.MaxHeaderBytes > 1<<20 {
		add("server.connections.max-header-bytes: %d must be between 4096 and 1048576", c.MaxHeaderBytes)
	}
	if c.HTTP2MaxConcurrentStreams < 1 || c.HTTP2MaxConcurrentStreams > 1000 {
		add("server.connections.http2-max-concurrent-streams: %d must be between 1 and 1000", c.HTTP2MaxConcurrentStreams)
	}
	return errs
}

// connLimitsOf derives the caps' live settings (web/connlimit.go) from cfg
// and the limiter's settings of the same configuration (its parsed
// whitelist and trusted proxies).
func connLimitsOf(cfg ConnectionsConfig, ls *limiterSettings) web.ConnLimits {
	exempt := append(append([]netip.Prefix(nil), ls.edge.Whitelist...), ls.edge.TrustedProxies...)
	return web.ConnLimits{PerIP: cfg.MaxPerIP, Total: cfg.MaxTotal, FirstRequest: cfg.FirstRequestTimeout, Exempt: exempt}
}

// publicHTTPServer bounds hs, the server of the ACME listener or of the
// plain-HTTP one, as cfg says: the idle and header limits, HTTP/2's, and
// the first-request deadline of connections from a web.ConnLimiter's
// listener.
func publicHTTPServer(hs *http.Server, cfg ConnectionsConfig) {
	web.NoteRequests(hs)
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
