// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
)

// The tenants of the admin API (acme.Tenant), behind the API's token and
// cross-origin guard like every other route:
//
//	POST   /api/v1/tenants          a TenantView → the new tenant (201)
//	GET    /api/v1/tenants          every tenant, by name
//	GET    /api/v1/tenants/{name}   one tenant
//	GET    /api/v1/tenants/{name}/report  the tenant with its keys, accounts, buckets, refusals, certificates (tenantreport.go)
//	PUT    /api/v1/tenants/{name}   a TenantView → the tenant with that policy, replaced whole
//	DELETE /api/v1/tenants/{name}   204; 409 while EAB keys belong to it
//
// A malformed policy is a 400 whose error names every bad field and entry.

// TenantView is a tenant as the admin API takes and shows it.
type TenantView struct {
	Name            string   `json:"name"`
	AllowedNames    []string `json:"allowed_names"`
	DeniedNames     []string `json:"denied_names"`
	Wildcards       bool     `json:"wildcards"`
	AllowedIPRanges []string `json:"allowed_ip_ranges"`
	Profiles        []string `json:"profiles"`
	ChallengeTypes  []string `json:"challenge_types"`
	// DelegatedZones are the ".zones" whose names the tenant's accounts
	// get with no challenge (acme.Tenant.DelegatedZones).
	DelegatedZones []string `json:"delegated_zones"`
	// MaxLifetime is a Go duration ("720h"); "" or "0s" for no cap.
	MaxLifetime string    `json:"max_lifetime,omitempty"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`
}

// tenantView shows t.
func tenantView(t *acme.Tenant) TenantView {
	v := TenantView{
		Name: t.Name, AllowedNames: nonNil(t.AllowedNames), DeniedNames: nonNil(t.DeniedNames), Wildcards: t.Wildcards,
		AllowedIPRanges: nonNil(t.AllowedIPRanges), Profiles: nonNil(t.Profiles), ChallengeTypes: []string{},
		DelegatedZones: nonNil(t.DelegatedZones), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	for _, ct := range t.ChallengeTypes {
		v.ChallengeTypes = append(v.ChallengeTypes, string(ct))
	}
	if t.MaxLifetime > 0 {
		v.MaxLifetime = t.MaxLifetime.String()
	}
	return v
}

// Tenant is the policy v asks for.
func (v TenantView) Tenant() (acme.Tenant, error) {
	t := acme.Tenant{
		Name: v.Name, AllowedNames: v.AllowedNames, DeniedNames: v.DeniedNames, Wildcards: v.Wildcards,
		AllowedIPRanges: v.AllowedIPRanges, Profiles: v.Profiles, DelegatedZones: v.DelegatedZones,
	}
	for _, ct := range v.ChallengeTypes {
		t.ChallengeTypes = append(t.ChallengeTypes, acme.ChallengeType(ct))
	}
	if v.MaxLifetime != "" {
		d, err := time.ParseDuration(v.MaxLifetime)
		if err != nil {
			return t, acme.Malformed("max_lifetime: %q is not a duration such as \"720h\"", v.MaxLifetime)
		}
		t.MaxLifetime = d
	}
	return t, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) tenantRoutes(r chi.Router) {
	r.Post("/tenants", s.api(s.apiTenantCreate))
	r.Get("/tenants", s.api(s.apiTenantList))
	r.Get("/tenants/{name}", s.api(s.apiTenantGet))
	r.Get("/tenants/{name}/report", s.api(s.apiTenantReport))
	r.Put("/tenants/{name}", s.api(s.apiTenantUpdate))
	r.Delete("/tenants/{name}", s.api(s.apiTenantDelete))
}

// decodeTenant reads the TenantView of a request's body.
func decodeTenant(r *http.Request) (acme.Tenant, error) {
	var v TenantView
	if err := decodeBody(r, &v); err != nil {
		return acme.Tenant{}, err
	}
	return v.Tenant()
}

func (s *Server) apiTenantCreate(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTenant(r)
	if err == nil {
		var created *acme.Tenant
		if created, err = s.cfg.Service.CreateTenant(r.Context(), t); err == nil {
			s.logAction(r.Context(), "admin: tenant created", "tenant", created.Name)
			writeJSON(w, http.StatusCreated, tenantView(created))
			return nil
		}
	}
	return err
}

func (s *Server) apiTenantList(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.cfg.Service.ListTenants(r.Context())
	if err != nil {
		return err
	}
	p := Page[TenantView]{Items: []TenantView{}}
	for _, t := range ts {
		p.Items = append(p.Items, tenantView(t))
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) apiTenantGet(w http.ResponseWriter, r *http.Request) error {
	t, err := s.cfg.Service.GetTenant(r.Context(), chi.URLParam(r, "name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tenantView(t))
	return nil
}

func (s *Server) apiTenantUpdate(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTenant(r)
	if err == nil {
		name := chi.URLParam(r, "name")
		if t.Name != "" && t.Name != name {
			err = acme.Malformed("the body names tenant %q, the path %q: a tenant cannot be renamed", t.Name, name)
		} else {
			t.Name = name
			var updated *acme.Tenant
			if updated, err = s.cfg.Service.UpdateTenant(r.Context(), t); err == nil {
				s.logAction(r.Context(), "admin: tenant updated", "tenant", updated.Name)
				writeJSON(w, http.StatusOK, tenantView(updated))
				return nil
			}
		}
	}
	return err
}

func (s *Server) apiTenantDelete(w http.ResponseWriter, r *http.Request) error {
	name := chi.URLParam(r, "name")
	if err := s.cfg.Service.DeleteTenant(r.Context(), name); err != nil {
		return err
	}
	s.logAction(r.Context(), "admin: tenant deleted", "tenant", name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
