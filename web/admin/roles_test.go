// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
	"github.com/weir-pki/weir/storage/sqlite"
)

// roleEnv is an admin Server with a read and an operate credential.
type roleEnv struct {
	s             *Server
	h             http.Handler
	creds         *CredentialSet
	store         *sqlite.Store
	clock         *sourcetest.Clock
	read, operate string // their tokens
}

func newRoleEnv(t *testing.T) *roleEnv {
	t.Helper()
	c := sourcetest.NewClock(testNow)
	store := openCredentialStore(t)
	creds := NewCredentialSet(store, c.Now)
	if err := creds.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: testToken, Credentials: creds, Hosts: []string{"example.com"},
		Service: &acme.Service{}, Limits: &limits.Adapter{}, Metrics: NewMetrics(MetricsOptions{}),
		Config: func() ConfigInfo { return ConfigInfo{YAML: "admin: {}"} }, Now: c.Now,
		Health: http.NotFoundHandler(), Ready: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	e := &roleEnv{s: s, h: s.Handler(), creds: creds, store: store, clock: c}
	rd, err := creds.Add(t.Context(), "viewer", RoleRead, RootName)
	if err != nil {
		t.Fatal(err)
	}
	op, err := creds.Add(t.Context(), "oncall", RoleOperate, RootName)
	if err != nil {
		t.Fatal(err)
	}
	e.read, e.operate = rd.Token, op.Token
	return e
}

// openCredentialStore is a SQLite store of its own, closed at the end of
// the test (a second Close is harmless).
func openCredentialStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// routes is every route of the admin listener as "METHOD pattern".
func routes(t *testing.T, h http.Handler) []string {
	t.Helper()
	var out []string
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// examplePath fills a pattern's parameters.
func examplePath(pattern string) string {
	return regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(strings.TrimSuffix(pattern, "*"), "x1")
}

// TestRouteRolesCoverEveryRoute fails for a route that roles.go does not
// name (a new route must be given its role) and for an entry naming no
// route.
func TestRouteRolesCoverEveryRoute(t *testing.T) {
	e := newRoleEnv(t)
	seen := map[string]bool{}
	for _, rt := range routes(t, e.h) {
		method, pattern, _ := strings.Cut(rt, " ")
		key := rt
		if publicRoutes["* "+pattern] {
			key = "* " + pattern
		}
		seen[key] = true
		_, inRoles := routeRoles[key]
		if inRoles == publicRoutes[key] {
			t.Errorf("route %s: in routeRoles %v, in publicRoutes %v; it must be in exactly one (roles.go)", rt, inRoles, publicRoutes[key])
		}
		if inRoles {
			r := httptest.NewRequest(method, examplePath(pattern), nil)
			if need, ok := e.s.routeRole(r); !ok || need != routeRoles[key] {
				t.Errorf("route %s: routeRole of %s %s is %q %v, want %q", rt, method, r.URL.Path, need, ok, routeRoles[key])
			}
		}
	}
	for k := range routeRoles {
		if !seen[k] {
			t.Errorf("routeRoles names %s, which is not a route", k)
		}
	}
	for k := range publicRoutes {
		if !seen[k] {
			t.Errorf("publicRoutes names %s, which is not a route", k)
		}
	}
}

// TestRouteRoleUnknown: a request the table does not know (a mount
// point, a path with a slash too many, a route chi would answer 404 or
// 405) needs operate unless it is a GET or HEAD; the read credential's
// POSTs to such paths are refused, or answered 404.
func TestRouteRoleUnknown(t *testing.T) {
	e := newRoleEnv(t)
	for _, tc := range []struct {
		method, path string
		want         Role
	}{
		{http.MethodGet, "/eab", RoleRead}, {http.MethodPost, "/eab", RoleOperate},
		{http.MethodGet, "/api/v1", RoleRead}, {http.MethodPost, "/api/v1", RoleOperate},
		{http.MethodPost, "/api/v1/eab/", RoleOperate}, {http.MethodPost, "//api/v1/eab", RoleOperate},
		{http.MethodPost, "/api/v1//eab", RoleOperate}, {http.MethodPatch, "/api/v1/tenants/x", RoleOperate},
		{http.MethodDelete, "/api/v1/certs/x", RoleOperate}, {http.MethodGet, "/no/such/page", RoleRead},
		{http.MethodHead, "/", RoleRead},
	} {
		r := httptest.NewRequest(tc.method, "http://example.com/", nil)
		r.URL.Path = tc.path
		if need, known := e.s.routeRole(r); need != tc.want || known {
			t.Errorf("%s %s: needs %q (known %v), want %q by default", tc.method, tc.path, need, known, tc.want)
		}
		r.Header.Set("Authorization", "Bearer "+e.read)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		// chi answers a path of no route 404 before any middleware of
		// the authenticated group runs; a mount point reaches authorize.
		if tc.want == RoleOperate && rec.Code != http.StatusForbidden && rec.Code != http.StatusNotFound {
			t.Errorf("%s %s with the read credential: %d, want 403 (or chi's 404)", tc.method, tc.path, rec.Code)
		}
	}
	// /eab is where the EAB page's create form posts (the mount point of
	// /eab/): refused to read.
	r := httptest.NewRequest(http.MethodPost, "/eab", strings.NewReader("label=x"))
	r.Header.Set("Authorization", "Bearer "+e.read)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	if rec.Code != http.StatusForbidden {
		t.Errorf("POST /eab with the read credential: %d, want 403", rec.Code)
	}
}

// TestRouteRolesStateChangesNeedOperate: every route that is not a GET
// needs operate, but the explain computation.
func TestRouteRolesStateChangesNeedOperate(t *testing.T) {
	for k, need := range routeRoles {
		if !strings.HasPrefix(k, "GET ") && k != "POST /api/v1/ratelimit/explain" && need != RoleOperate {
			t.Errorf("%s needs %q; a change of state needs operate", k, need)
		}
	}
}

// TestAuthorizeEveryRoute sends each authenticated route through the
// whole handler with the read credential: operate's routes answer 403
// (the admin API's {"error": ...} under /api/, the error page elsewhere) before any
// handler runs; and through authorize alone with each role, which lets
// operate through everywhere and read through on read's routes.
func TestAuthorizeEveryRoute(t *testing.T) {
	e := newRoleEnv(t)
	reached := false
	pass := e.s.authorize(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))
	for _, rt := range routes(t, e.h) {
		need, ok := routeRoles[rt]
		if !ok {
			continue
		}
		method, pattern, _ := strings.Cut(rt, " ")
		path := examplePath(pattern)
		for _, who := range []Principal{{Name: "viewer", Role: RoleRead}, {Name: "oncall", Role: RoleOperate}, root} {
			reached = false
			r := httptest.NewRequest(method, path, nil)
			rec := httptest.NewRecorder()
			pass.ServeHTTP(rec, r.WithContext(withPrincipal(r, who)))
			if want := who.Role.allows(need); reached != want {
				t.Errorf("%s as %s (%s): handler reached %v, want %v (status %d)", rt, who.Name, who.Role, reached, want, rec.Code)
			}
		}
		if need != RoleOperate {
			continue
		}
		r := httptest.NewRequest(method, path, strings.NewReader("{}"))
		r.Header.Set("Authorization", "Bearer "+e.read)
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s with the read credential: %d, want 403", rt, rec.Code)
			continue
		}
		if strings.HasPrefix(path, "/api/") {
			// The admin API's one error shape: {"error": "..."} and
			// nothing else, as its 400, 401 and 404.
			var body map[string]any
			err := json.Unmarshal(rec.Body.Bytes(), &body)
			msg, _ := body["error"].(string)
			if err != nil || rec.Header().Get("Content-Type") != "application/json" || len(body) != 1 ||
				msg != "the credential viewer has the read role; this needs operate" {
				t.Errorf("%s with the read credential: %q %s (%v), want {\"error\": ...} naming viewer and the roles", rt, rec.Header().Get("Content-Type"), rec.Body, err)
			}
		} else if !strings.Contains(rec.Body.String(), "viewer has the read role") || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s with the read credential: %q, want the error page naming viewer:\n%s", rt, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
}
