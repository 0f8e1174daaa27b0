// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ServerConfig is the ACME listener, and the plain-HTTP listener of the
// public artefacts.
type ServerConfig struct {
	Listen       string   `yaml:"listen"`
	ExternalURL  string   `yaml:"external-url"`
	TLS          FilePair `yaml:"tls"`
	MaxBodyBytes int64    `yaml:"max-body-bytes"`
	// TrustedProxies are the peers whose X-Forwarded-For / Forwarded
	// header is believed when finding the client IP.
	TrustedProxies []string `yaml:"trusted-proxies"`
	// Connections bounds the listener's connections (connconfig.go).
	Connections ConnectionsConfig `yaml:"connections"`
	// HTTP is the plain-HTTP listener of the public artefacts.
	HTTP PublicHTTPConfig `yaml:"http"`
}

// FilePair names a certificate and its key.
type FilePair struct {
	CertFile string `yaml:"cert-file"`
	KeyFile  string `yaml:"key-file"`
}

// PublicHTTPConfig is server.http: a plain-HTTP listener that serves the
// CA's public, signed artefacts only (web.Server.ArtefactHandler: the
// CRLs, the issuers' certificates, the root), so that the certificates
// can name http:// URLs for them. RFC 5280 §4.2.1.13 and §4.2.2.1 name
// HTTP (or LDAP) for CRL distribution points and caIssuers: a relying
// party fetches them before it trusts anything, and a CRL served only
// under the HTTPS certificate it covers is circular.
type PublicHTTPConfig struct {
	// Listen is its address; "" turns it off, and the certificates then
	// name the ACME listener's https:// URLs.
	Listen string `yaml:"listen"`
	// ExternalURL is the http:// base URL the certificates name; ""
	// derives it (ArtefactURL).
	ExternalURL string `yaml:"external-url"`
}

// defaultHTTPListen is server.http.listen's default: an unprivileged
// port on loopback, as the ACME listener's, so that weir serve runs as
// any user on a fresh machine and its certificates name http:// URLs
// from the start.
const defaultHTTPListen = "localhost:14080"

// validateHTTP checks server.http: host:port, not another listener's
// address, and an absolute http:// external-url only with a listener.
func (c Config) validateHTTP() []error {
	h := c.Server.HTTP
	var errs []error
	if h.Listen != "" {
		_, port, err := net.SplitHostPort(h.Listen)
		if err != nil {
			errs = append(errs, fmt.Errorf("server.http.listen: %q is not host:port (\"\" turns the listener off)", h.Listen))
		}
		if port != "0" && (h.Listen == c.Server.Listen || (c.Admin.On() && h.Listen == c.Admin.Listen)) {
			errs = append(errs, fmt.Errorf("server.http.listen: %q is another listener's address (server.listen or admin.listen)", h.Listen))
		}
	}
	if h.ExternalURL != "" {
		u, err := url.Parse(h.ExternalURL)
		switch {
		case h.Listen == "":
			errs = append(errs, errors.New("server.http.external-url: set, but server.http.listen is \"\" (off): the certificates name the ACME listener's URLs"))
		case err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "":
			errs = append(errs, fmt.Errorf("server.http.external-url: %q must be an http:// URL with a host and no path (relying parties fetch CRLs without TLS; for another URL set ca.intermediate.crl-url)", h.ExternalURL))
		}
	}
	return errs
}

// ArtefactURL is the base URL of the public artefacts that weir's
// certificates name (their CRL distribution points and caIssuers):
// server.http.external-url; else http:// with the host of
// server.external-url (else of server.http.listen) and the port of
// server.http.listen (none for 80); or, with the plain-HTTP listener off,
// the ACME listener's (externalURL).
func ArtefactURL(cfg Config) string {
	h := cfg.Server.HTTP
	switch {
	case h.Listen == "":
		return externalURL(cfg)
	case h.ExternalURL != "":
		return strings.TrimSuffix(h.ExternalURL, "/")
	}
	host, port, _ := net.SplitHostPort(h.Listen)
	if u, err := url.Parse(cfg.Server.ExternalURL); cfg.Server.ExternalURL != "" && err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	if port == "80" {
		if strings.Contains(host, ":") {
			return "http://[" + host + "]"
		}
		return "http://" + host
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Listeners are the sockets Serve serves.
type Listeners struct {
	// ACME is the ACME listener (server.listen), served over HTTPS.
	ACME net.Listener
	// Admin is the admin listener (admin.listen); nil when admin.enabled
	// is false.
	Admin net.Listener
	// HTTP is the plain-HTTP listener of the public artefacts
	// (server.http.listen); nil when it is off.
	HTTP net.Listener
}

// Listen binds the listeners cfg configures, as weir serve does; an
// address that cannot be bound is an error naming its key, and nothing
// stays bound.
func Listen(cfg Config) (Listeners, error) {
	var ls Listeners
	for _, l := range []struct {
		key, addr string
		on        bool
		ln        *net.Listener
	}{
		{"server.listen", cfg.Server.Listen, true, &ls.ACME},
		{"admin.listen", cfg.Admin.Listen, cfg.Admin.On(), &ls.Admin},
		{"server.http.listen", cfg.Server.HTTP.Listen, cfg.Server.HTTP.Listen != "", &ls.HTTP},
	} {
		if !l.on {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			ls.Close()
			return Listeners{}, fmt.Errorf("%s: %w", l.key, err)
		}
		*l.ln = ln
	}
	return ls, nil
}

// Close closes every listener of ls.
func (ls Listeners) Close() {
	for _, ln := range []net.Listener{ls.ACME, ls.Admin, ls.HTTP} {
		if ln != nil {
			ln.Close()
		}
	}
}
