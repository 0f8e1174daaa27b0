// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
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
	r.Post("/eab", s.api(s.apiEABCreate))
	r.Get("/eab", s.api(s.apiEABList))
	r.Post("/eab/{id}/revoke", s.api(s.apiEABRevoke))
}

func (s *Server) apiEABCreate(w http.ResponseWriter, r *http.Request) error {
	var req EABCreateRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	v, err := s.CreateEAB(r.Context(), req.Label, req.Tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// CreateEAB makes an EAB key labelled label, of the tenant named (none:
// the default tenant); the view carries its HMAC key, which nothing shows
// again.
func (s *Server) CreateEAB(ctx context.Context, label, tenant string) (EABKeyView, error) {
	k, err := s.cfg.Service.CreateEABKey(ctx, label, tenant)
	if err != nil {
		return EABKeyView{}, err
	}
	// The HMAC key is a secret: never logged.
	s.logAction(ctx, "admin: EAB key created", "key_id", k.ID, "label", k.Label, "tenant", k.Tenant)
	v := eabKeyView(k)
	v.HMACKey = base64.RawURLEncoding.EncodeToString(k.HMACKey)
	return v, nil
}

func (s *Server) apiEABList(w http.ResponseWriter, r *http.Request) error {
	p, err := s.EABKeys(r.Context(), r.URL.Query().Get("label"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// EABKeys lists the EAB keys with label ("" for all), newest first.
func (s *Server) EABKeys(ctx context.Context, label string) (Page[EABKeyView], error) {
	keys, err := s.cfg.Service.ListEABKeys(ctx, label)
	if err != nil {
		return Page[EABKeyView]{}, err
	}
	p := Page[EABKeyView]{Items: []EABKeyView{}}
	for _, k := range keys {
		p.Items = append(p.Items, eabKeyView(k))
	}
	return p, nil
}

func (s *Server) apiEABRevoke(w http.ResponseWriter, r *http.Request) error {
	v, err := s.RevokeEAB(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// RevokeEAB revokes the EAB key id.
func (s *Server) RevokeEAB(ctx context.Context, id string) (EABKeyView, error) {
	k, err := s.cfg.Service.RevokeEABKey(ctx, id)
	if err != nil {
		return EABKeyView{}, err
	}
	s.logAction(ctx, "admin: EAB key revoked", "key_id", k.ID, "label", k.Label, "bound_account", k.BoundAccount)
	return eabKeyView(k), nil
}
