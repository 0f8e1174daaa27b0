// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"strings"
)

// sessionCookie is the dashboard's login cookie: a session ID (session.go).
const sessionCookie = "weir_admin"

// secure reports whether cookies must be Secure: the listener serves
// HTTPS, or this request came over TLS.
func (s *Server) secure(r *http.Request) bool { return s.cfg.TLS || r.TLS != nil }

// setSessionCookie sets the session cookie to id; "" clears it.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, id string) {
	maxAge := int(sessionLifetime.Seconds())
	if id == "" {
		maxAge = -1
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		Secure: s.secure(r), SameSite: http.SameSiteStrictMode, MaxAge: maxAge,
	})
}

// cookieSession reads the request's session cookie; ok is false without a
// live session.
func (s *Server) cookieSession(r *http.Request) (requestSession, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return requestSession{}, false
	}
	csrf, who, ok := s.auth.use(c.Value)
	return requestSession{id: c.Value, csrf: csrf, who: who}, ok
}

// csrfOK reports whether a state-changing request carries the session's
// CSRF token, in the X-CSRF-Token header or the form field csrf.
func csrfOK(r *http.Request, sess requestSession) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && equalSecret(got, sess.csrf)
}

// authenticate refuses requests without the token or a session: 401 with a
// WWW-Authenticate challenge for the API and /metrics, a redirect to the
// login page for the dashboard. A state-changing request authenticated by
// the session cookie must also carry the session's CSRF token.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.auth.none {
			next.ServeHTTP(w, r.WithContext(withPrincipal(r, root)))
			return
		}
		if h := r.Header.Get("Authorization"); h != "" {
			scheme, tok, found := strings.Cut(h, " ")
			if found && strings.EqualFold(scheme, "Bearer") {
				if who, ok := s.auth.bearer(strings.TrimSpace(tok)); ok {
					next.ServeHTTP(w, r.WithContext(withPrincipal(r, who)))
					return
				}
			}
			s.unauthorized(w, r)
			return
		}
		sess, ok := s.cookieSession(r)
		if !ok {
			s.unauthorized(w, r)
			return
		}
		if !csrfOK(r, sess) {
			s.fail(w, r, &apiError{status: http.StatusForbidden, msg: "missing or wrong CSRF token"})
			return
		}
		next.ServeHTTP(w, r.WithContext(withSession(withPrincipal(r, sess.who), sess)))
	})
}

// unauthorized sends a browser's page request to the login page and
// answers anything else 401.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/metrics" {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="weir admin"`)
	s.fail(w, r, &apiError{status: http.StatusUnauthorized, msg: "a bearer token is required (the admin-token file in the data directory)"})
}

// login checks the token typed into the login form and starts a session.
// A session the browser already had ends: a login always gets a new ID.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.auth.none {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	id, _, who, ok := s.auth.login(strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.cfg.Log.Warn("admin login refused", "remote", r.RemoteAddr)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		s.renderLogin(w, "That token is not an admin credential.")
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.auth.end(c.Value)
	}
	s.cfg.Log.Info("admin login", "actor", who.Name, "role", who.Role, "remote", r.RemoteAddr)
	s.setSessionCookie(w, r, id)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the session; it needs the session's CSRF token, so that
// another site cannot log an administrator out. Without a live session
// there is nothing to end, and only the cookie is cleared.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if sess, ok := s.cookieSession(r); ok {
		if !csrfOK(r, sess) {
			s.fail(w, r, &apiError{status: http.StatusForbidden, msg: "missing or wrong CSRF token"})
			return
		}
		s.auth.end(sess.id)
	}
	s.setSessionCookie(w, r, "")
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// loginForm shows the login page; under admin.auth: none there is no
// login, and it sends the browser to the overview.
func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if s.auth.none {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.renderLogin(w, "")
}
