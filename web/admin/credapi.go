// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// The administrators' credentials in the admin API (operate only, as
// roles.go says), and who the caller is:
//
//	GET    /api/v1/credentials         every credential, the token file's first (no tokens), read from the store
//	POST   /api/v1/credentials         {"name", "role"} → the new credential with its token, shown once (201)
//	DELETE /api/v1/credentials/{name}  204; the token stops working and its sessions end
//	GET    /api/v1/whoami              the caller's name and role

// CredentialRequest is the body of POST /api/v1/credentials.
type CredentialRequest struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

func (s *Server) credentialRoutes(r chi.Router) {
	r.Get("/credentials", s.api(s.apiCredentialList))
	r.Post("/credentials", s.api(s.apiCredentialAdd))
	r.Delete("/credentials/{name}", s.api(s.apiCredentialRevoke))
	r.Get("/whoami", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, principalOf(r.Context())) })
}

// credentials is the set of named credentials, or the error of a listener
// that has none (admin.auth: none).
func (s *Server) credentials() (*CredentialSet, error) {
	if s.cfg.Credentials == nil || s.auth.none {
		return nil, &apiError{status: http.StatusConflict, msg: "this admin listener takes no credentials (admin.auth: none)"}
	}
	return s.cfg.Credentials, nil
}

func (s *Server) apiCredentialList(w http.ResponseWriter, r *http.Request) error {
	c, err := s.credentials()
	if err != nil {
		return err
	}
	items, err := c.List(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Page[CredentialView]{Items: items})
	return nil
}

func (s *Server) apiCredentialAdd(w http.ResponseWriter, r *http.Request) error {
	var req CredentialRequest
	err := decodeBody(r, &req)
	var c *CredentialSet
	if err == nil {
		c, err = s.credentials()
	}
	if err == nil {
		var v CredentialView
		if v, err = c.Add(r.Context(), req.Name, Role(req.Role), principalOf(r.Context()).Name); err == nil {
			// The token is a secret: never logged.
			s.logAction(r.Context(), "admin: credential added", "credential", v.Name, "credential_role", v.Role)
			writeJSON(w, http.StatusCreated, v)
			return nil
		}
	}
	return err
}

func (s *Server) apiCredentialRevoke(w http.ResponseWriter, r *http.Request) error {
	name := chi.URLParam(r, "name")
	c, err := s.credentials()
	if err == nil {
		err = c.Revoke(r.Context(), name)
	}
	if err != nil {
		return err
	}
	s.logAction(r.Context(), "admin: credential revoked; its sessions end", "credential", name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
