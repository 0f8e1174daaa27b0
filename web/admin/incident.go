// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"log/slog"
	"net/http"

	"github.com/weir-pki/weir/acme"
)

// IncidentRequest is the body of POST /api/v1/certs/revoke-all and
// /api/v1/certs/renew-now: exactly one of Account, Serials and All.
type IncidentRequest struct {
	Account string   `json:"account,omitempty"`
	Serials []string `json:"serials,omitempty"`
	All     bool     `json:"all,omitempty"`
	// Reason is the revocation reason of revoke-all (name or code).
	Reason string `json:"reason,omitempty"`
}

// IncidentView is what an incident action did.
type IncidentView struct {
	Action       string     `json:"action"`
	Certificates []CertView `json:"certificates"`
}

func (q IncidentRequest) scope() acme.IncidentScope {
	var serials []string
	for _, s := range q.Serials {
		serials = append(serials, normalizeSerial(s))
	}
	return acme.IncidentScope{AccountID: acme.AccountID(q.Account), Serials: serials, All: q.All}
}

// apiRevokeAll revokes every active certificate of the scope (incident
// mode): their ARI windows are in the past from then on.
func (s *Server) apiRevokeAll(w http.ResponseWriter, r *http.Request) error {
	var req IncidentRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	code, err := parseReason(req.Reason)
	if err != nil {
		return err
	}
	certs, err := s.cfg.Service.RevokeAll(r.Context(), req.scope(), code)
	if err != nil {
		return err
	}
	s.writeIncident(w, r, "revoked", certs)
	return nil
}

// apiRenewNow moves the scope's renewal windows into the past without
// revoking (a mass renewal).
func (s *Server) apiRenewNow(w http.ResponseWriter, r *http.Request) error {
	var req IncidentRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	certs, err := s.cfg.Service.RenewNow(r.Context(), req.scope())
	if err != nil {
		return err
	}
	s.writeIncident(w, r, "renew-now", certs)
	return nil
}

func (s *Server) writeIncident(w http.ResponseWriter, r *http.Request, action string, certs []*acme.Certificate) {
	now := s.cfg.Now().UTC()
	v := IncidentView{Action: action, Certificates: []CertView{}}
	for _, c := range certs {
		v.Certificates = append(v.Certificates, certView(c, now, false))
	}
	s.logActionAt(r.Context(), slog.LevelWarn, "admin: incident action", "action", action, "certificates", len(certs))
	writeJSON(w, http.StatusOK, v)
}
