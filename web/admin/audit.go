// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/weir-pki/weir/acme"
)

// Auditor records the administrators' actions in the audit trail
// (internal/audit).
type Auditor interface {
	AdminAction(ctx context.Context, actor acme.Actor, action AuditedAction)
}

// AuditedAction is one state-changing request to the admin listener.
type AuditedAction struct {
	// Action is the method and path, e.g. "POST /api/v1/certs/0a1b/revoke".
	Action string
	// Request is what the request asked: its JSON body, or its form
	// fields but the CSRF token; nil when it had neither.
	Request any
	// Status is the HTTP status of the answer.
	Status int
}

// auditBodyMax is how much of a request body the audit trail keeps.
const auditBodyMax = 4 << 10

// auditActions records every state-changing request but a read-only
// explain, after it is answered (refused by authorize or not), with the
// request's credential as the actor; the use cases it calls (a
// revocation) see that actor too.
func (s *Server) auditActions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Audit == nil || r.Method == http.MethodGet || r.Method == http.MethodHead ||
			strings.HasSuffix(r.URL.Path, "/ratelimit/explain") {
			next.ServeHTTP(w, r)
			return
		}
		actor := acme.Actor{Kind: "admin", ID: principalOf(r.Context()).Name, Address: remoteAddr(r)}
		req := auditedRequest(r)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(acme.WithActor(r.Context(), actor)))
		action := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			action += "?" + r.URL.RawQuery
		}
		s.cfg.Audit.AdminAction(r.Context(), actor, AuditedAction{Action: action, Request: req, Status: rec.status})
	})
}

// auditedRequest reads what r asks, leaving its body for the handler.
func auditedRequest(r *http.Request) any {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if r.ParseForm() != nil {
			return nil
		}
		form := map[string][]string{}
		for k, v := range r.PostForm {
			if k != "csrf" {
				form[k] = v
			}
		}
		return form
	}
	if r.Body == nil {
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, auditBodyMax))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || !json.Valid(head) {
		return nil
	}
	return json.RawMessage(head)
}

// remoteAddr is the address of r's peer.
func remoteAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// statusRecorder keeps the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
