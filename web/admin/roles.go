// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// The one place that says which role each route of the admin listener
// needs: "METHOD pattern" as chi knows the route. roles_test.go fails for
// a route missing here, and for an entry naming no route. A request this
// table does not know (a path chi answers 404 or 405, a mount point) needs
// operate unless it is a GET or HEAD, which every credential may send. The routes outside authentication (the
// probes, the login page, the stylesheet) are publicRoutes.

// routeRoles maps each authenticated route to the role it needs: read for
// what only shows, operate for every change of state.
var routeRoles = map[string]Role{
	"GET /metrics": RoleRead,

	// The JSON API.
	"GET /api/v1/overview":                  RoleRead,
	"GET /api/v1/config":                    RoleRead,
	"GET /api/v1/limits":                    RoleRead,
	"GET /api/v1/ratelimit/status":          RoleRead,
	"POST /api/v1/ratelimit/explain":        RoleRead, // a computation: it spends and changes nothing
	"POST /api/v1/ratelimit/reset":          RoleOperate,
	"GET /api/v1/ratelimit/activity":        RoleRead,
	"GET /api/v1/accounts":                  RoleRead,
	"GET /api/v1/accounts/{id}":             RoleRead,
	"POST /api/v1/accounts/{id}/deactivate": RoleOperate,
	"GET /api/v1/certs":                     RoleRead,
	"GET /api/v1/certs/{serial}":            RoleRead,
	"POST /api/v1/certs/{serial}/revoke":    RoleOperate,
	"POST /api/v1/certs/revoke-all":         RoleOperate,
	"POST /api/v1/certs/renew-now":          RoleOperate,
	"GET /api/v1/orders":                    RoleRead,
	"GET /api/v1/crl":                       RoleRead,
	"POST /api/v1/crl/regenerate":           RoleOperate,
	"GET /api/v1/ca/migration":              RoleRead,
	"GET /api/v1/log":                       RoleRead,
	"GET /api/v1/log/proof/{serial}":        RoleRead,
	"POST /api/v1/eab":                      RoleOperate,
	"GET /api/v1/eab":                       RoleRead,
	"POST /api/v1/eab/{id}/revoke":          RoleOperate,
	"POST /api/v1/tenants":                  RoleOperate,
	"GET /api/v1/tenants":                   RoleRead,
	"GET /api/v1/tenants/{name}/report":     RoleRead,
	"GET /api/v1/tenants/{name}":            RoleRead,
	"PUT /api/v1/tenants/{name}":            RoleOperate,
	"DELETE /api/v1/tenants/{name}":         RoleOperate,
	"GET /api/v1/credentials":               RoleOperate, // token management is operate's, listing included
	"POST /api/v1/credentials":              RoleOperate,
	"DELETE /api/v1/credentials/{name}":     RoleOperate,
	"GET /api/v1/whoami":                    RoleRead,

	// The dashboard.
	"GET /":                          RoleRead,
	"GET /limiter":                   RoleRead,
	"POST /limiter/reset":            RoleOperate,
	"GET /accounts":                  RoleRead,
	"GET /accounts/{id}":             RoleRead,
	"POST /accounts/{id}/deactivate": RoleOperate,
	"GET /certs":                     RoleRead,
	"GET /certs/{serial}":            RoleRead,
	"POST /certs/{serial}/revoke":    RoleOperate,
	"GET /orders":                    RoleRead,
	"GET /orders/{id}":               RoleRead,
	"GET /config":                    RoleRead,
	"GET /eab/":                      RoleRead,
	"POST /eab/":                     RoleOperate,
	"GET /tenants":                   RoleRead,
	"POST /tenants":                  RoleOperate,
	"GET /tenants/{name}":            RoleRead,
	"POST /tenants/{name}":           RoleOperate,
	"POST /tenants/{name}/delete":    RoleOperate,
	"POST /eab/{id}/revoke":          RoleOperate,
	"GET /migration":                 RoleRead,
}

// publicRoutes need no credential: the probes, the login and logout, the
// stylesheet and icon the login page needs.
var publicRoutes = map[string]bool{
	"* /healthz": true, "* /readyz": true, "GET /static/*": true,
	"GET /login": true, "POST /login": true, "POST /logout": true,
}

// callerCtxKey carries the request's caller in its context.
type callerCtxKey struct{}

// caller is who made a request, from where.
type caller struct {
	who    Principal
	remote string
}

// withPrincipal is r's context with p, the principal authenticate found.
func withPrincipal(r *http.Request, p Principal) context.Context {
	return context.WithValue(r.Context(), callerCtxKey{}, caller{who: p, remote: r.RemoteAddr})
}

// principalOf is who made the request; authenticate always sets it, so
// the zero Principal (no role) is a request that did not pass it.
func principalOf(ctx context.Context) Principal {
	c, _ := ctx.Value(callerCtxKey{}).(caller)
	return c.who
}

// logAction logs an administrator's action at info level with its actor
// (the credential's name) and the client's address.
func (s *Server) logAction(ctx context.Context, msg string, args ...any) {
	s.logActionAt(ctx, slog.LevelInfo, msg, args...)
}

// logActionAt is logAction at level.
func (s *Server) logActionAt(ctx context.Context, level slog.Level, msg string, args ...any) {
	c, _ := ctx.Value(callerCtxKey{}).(caller)
	s.cfg.Log.Log(ctx, level, msg, append(args, "actor", c.who.Name, "remote", c.remote)...)
}

// routeRole is the role r's route needs; known says whether routeRoles
// names it (else the need is the default of its method).
func (s *Server) routeRole(r *http.Request) (need Role, known bool) {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	pattern := s.router.Find(chi.NewRouteContext(), r.Method, path)
	if need, ok := routeRoles[r.Method+" "+pattern]; ok && pattern != "" {
		return need, true
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return RoleRead, false
	}
	return RoleOperate, false
}

// authorize refuses a request whose principal lacks the role of its
// route: 403 with the admin API's JSON error ({"error": "..."}, as its
// 400, 401 and 404) for the API and /metrics, the error page for the
// dashboard. It runs after auditActions, so that a refused change
// is in the audit trail with its actor.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need, _ := s.routeRole(r)
		who := principalOf(r.Context())
		if who.Role.allows(need) {
			next.ServeHTTP(w, r)
			return
		}
		s.cfg.Log.Warn("admin request refused: role", "actor", who.Name, "role", who.Role, "needs", need,
			"method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
		msg := "the credential " + who.Name + " has the " + string(who.Role) + " role; this needs " + string(need)
		if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/metrics" {
			writeError(w, http.StatusForbidden, msg)
			return
		}
		s.failPage(w, r, &apiError{status: http.StatusForbidden, msg: msg})
	})
}

// can reports whether the request's principal has role need; the
// dashboard shows a form only to those it would not refuse.
func can(r *http.Request, need Role) bool { return principalOf(r.Context()).Role.allows(need) }
