// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"slices"
	"strings"
)

// Two checks come before authentication, in every admin.auth mode: under
// admin.auth: none they are the only guard, and with a token they keep a
// logged-in browser from being used by another site.

// isProbe reports whether r is for /healthz or /readyz. The probes are
// exempt from the host check: they need no token, change nothing and say
// nothing a caller that can connect could not learn with a right Host,
// while the orchestrators that call them name the listener in ways weir
// cannot know (a Service name, a node address behind NAT).
func isProbe(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
}

// checkHost answers 421 Misdirected Request to a request whose Host is not
// one of the listener's names (hosts.go). The names accepted go to the log
// only: the caller may be a hostile page.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isProbe(r) || s.hosts.allows(r) {
			next.ServeHTTP(w, r)
			return
		}
		s.cfg.Log.Warn("admin request refused: not one of the listener's host names (add it to admin.hosts if it is)",
			"host", r.Host, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "accepted", s.hosts.list())
		s.fail(w, r, &apiError{status: http.StatusMisdirectedRequest, msg: "this admin listener does not answer for that host name"})
	})
}

// list is the accepted names and addresses, sorted, for the log.
func (p hostPolicy) list() string {
	var out []string
	for n := range p.names {
		out = append(out, n)
	}
	for a := range p.addrs {
		out = append(out, a.String())
	}
	slices.Sort(out)
	return strings.Join(append(out, "(the address the connection arrived at)"), " ")
}

// checkOrigin refuses a state-changing request that a browser sent from
// another origin: net/http's CrossOriginProtection reads Sec-Fetch-Site,
// or compares Origin with Host for a browser without it. Nothing is
// cross-origin by design: the dashboard posts only to itself, and the
// operator commands and scripts send neither header, so they pass. Login
// and logout are covered too (login CSRF would log a victim's browser in
// to a session the attacker chose).
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.crossOrigin.Check(r); err != nil {
			s.cfg.Log.Warn("admin request refused: cross-origin", "method", r.Method, "path", r.URL.Path,
				"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "remote", r.RemoteAddr, "err", err)
			s.fail(w, r, &apiError{status: http.StatusForbidden, msg: "cross-origin request refused: the admin listener takes state-changing requests only from its own pages and from clients that are not browsers"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
