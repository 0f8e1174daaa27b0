package admin

import (
	"encoding/base64"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
)

// The External Account Binding keys (RFC 8555 §7.3.4) of the admin API:
//
//	POST /api/v1/eab               {"label": "team-x", "tenant": "T"} → the new key, with its HMAC key (once)
//	GET  /api/v1/eab[?label=L]     the keys, newest first, never their HMAC keys
//	POST /api/v1/eab/{id}/revoke   the key, revoked

// EABCreateRequest is the body of POST /api/v1/eab.
type EABCreateRequest struct {
	Label string `json:"label"`
	// Tenant is the tenant the key and its account belong to; "" for the
	// default tenant (ca.policy alone).
	Tenant string `json:"tenant,omitempty"`
}

// EABKeyView is an EAB key as the admin API shows it. HMACKey is set only
// in the answer to its creation.
type EABKeyView struct {
	KeyID  string `json:"key_id"`
	Label  string `json:"label"`
	Tenant string `json:"tenant,omitempty"`
	// HMACKey is the MAC key, base64url without padding, as clients take
	// it (certbot --eab-hmac-key, lego --hmac).
	HMACKey      string     `json:"hmac_key,omitempty"`
	Status       string     `json:"status"` // unbound, bound or revoked
	CreatedAt    time.Time  `json:"created_at"`
	BoundAccount string     `json:"bound_account,omitempty"`
	BoundAt      *time.Time `json:"bound_at,omitempty"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
}

// eabKeyView shows k without its HMAC key.
func eabKeyView(k *acme.EABKey) EABKeyView {
	v := EABKeyView{KeyID: k.ID, Label: k.Label, Tenant: k.Tenant, Status: "unbound", CreatedAt: k.CreatedAt, BoundAccount: string(k.BoundAccount)}
	if k.Bound() {
		v.Status = "bound"
		if !k.BoundAt.IsZero() {
			t := k.BoundAt
			v.BoundAt = &t
		}
	}
	if k.Revoked() {
		v.Status = "revoked"
		t := k.RevokedAt
		v.RevokedAt = &t
	}
	return v
}

func (s *Server) eabRoutes(r chi.Router) {
	r.Post("/eab", s.apiEABCreate)
	r.Get("/eab", s.apiEABList)
	r.Post("/eab/{id}/revoke", s.apiEABRevoke)
}

func (s *Server) apiEABCreate(w http.ResponseWriter, r *http.Request) {
	var req EABCreateRequest
	if err := decodeBody(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	k, err := s.cfg.Service.CreateEABKey(r.Context(), req.Label, req.Tenant)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The HMAC key is a secret: never logged.
	s.cfg.Log.Info("admin: EAB key created", "key_id", k.ID, "label", k.Label, "tenant", k.Tenant)
	v := eabKeyView(k)
	v.HMACKey = base64.RawURLEncoding.EncodeToString(k.HMACKey)
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) apiEABList(w http.ResponseWriter, r *http.Request) {
	keys, err := s.cfg.Service.ListEABKeys(r.Context(), r.URL.Query().Get("label"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := Page[EABKeyView]{Items: []EABKeyView{}}
	for _, k := range keys {
		p.Items = append(p.Items, eabKeyView(k))
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) apiEABRevoke(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	k, err := s.cfg.Service.RevokeEABKey(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.cfg.Log.Info("admin: EAB key revoked", "key_id", k.ID, "label", k.Label, "bound_account", k.BoundAccount)
	writeJSON(w, http.StatusOK, eabKeyView(k))
}
