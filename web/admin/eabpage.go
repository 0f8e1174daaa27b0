// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// The dashboard's EAB page: the keys, a form that creates one and shows
// its HMAC key once, and a revoke form per key. The forms carry the CSRF
// token like every other.

// eabPage is the data of the EAB page.
type eabPage struct {
	Keys  []EABKeyView
	Label string
	// Created is the key the form just made, with its HMAC key; set only
	// in the answer to the creating POST, never stored or redirected.
	Created *EABKeyView
}

func (s *Server) pageEAB(w http.ResponseWriter, r *http.Request) {
	s.renderEAB(w, r, strings.TrimSpace(r.URL.Query().Get("label")), nil)
}

func (s *Server) renderEAB(w http.ResponseWriter, r *http.Request, label string, created *EABKeyView) {
	keys, err := s.EABKeys(r.Context(), label)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	status := http.StatusOK
	if created != nil {
		status = http.StatusCreated
	}
	s.render(w, r, status, "eab", "EAB keys", eabPage{Keys: keys.Items, Label: label, Created: created})
}

// postEABCreate answers with the page itself rather than a redirect: the
// HMAC key is shown in this one answer and goes nowhere else (no flash
// cookie, no URL).
func (s *Server) postEABCreate(w http.ResponseWriter, r *http.Request) {
	v, err := s.CreateEAB(r.Context(), strings.TrimSpace(r.PostFormValue("label")), strings.TrimSpace(r.PostFormValue("tenant")))
	if err != nil {
		s.afterPost(w, r, "/eab", "", err)
		return
	}
	s.renderEAB(w, r, "", &v)
}

func (s *Server) postEABRevoke(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if r.PostFormValue("confirm") != "yes" {
		s.afterPost(w, r, "/eab", "", badRequest("tick the confirmation box to revoke EAB key %s", id))
		return
	}
	_, err := s.RevokeEAB(r.Context(), id)
	s.afterPost(w, r, "/eab", "revoked EAB key "+id, err)
}
