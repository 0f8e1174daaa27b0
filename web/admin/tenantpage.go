// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// The dashboard's tenant pages: the list of tenants with a create form,
// and each tenant's report (tenantreport.go) with its update and delete
// forms. The forms are shown to the operate role only, and roles.go
// refuses their POSTs to the read role.

func (s *Server) tenantPageRoutes(r chi.Router) {
	r.Get("/tenants", s.pageTenants)
	r.Post("/tenants", s.postTenantCreate)
	r.Get("/tenants/{name}", s.pageTenant)
	r.Post("/tenants/{name}", s.postTenantUpdate)
	r.Post("/tenants/{name}/delete", s.postTenantDelete)
}

// tenantFormData is a tenant's create or update form (the template
// "tenant-form" of partials.html).
type tenantFormData struct {
	Page   *pageData
	Action string
	Tenant TenantView
	Create bool
}

func newTenantForm(p *pageData, action string, t TenantView, create bool) tenantFormData {
	return tenantFormData{Page: p, Action: action, Tenant: t, Create: create}
}

// tenantsPage is the data of the tenant list.
type tenantsPage struct {
	Tenants []TenantView
	// Form is the create form, kept as typed after a refusal.
	Form TenantView
	// Warning is TenantsEABWarning of the tenants.
	Warning string
}

func (s *Server) pageTenants(w http.ResponseWriter, r *http.Request) {
	ts, err := s.cfg.Service.ListTenants(r.Context())
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p := tenantsPage{Tenants: []TenantView{}, Warning: s.tenantsEABWarning(len(ts))}
	for _, t := range ts {
		p.Tenants = append(p.Tenants, tenantView(t))
	}
	s.render(w, r, http.StatusOK, "tenants", "Tenants", p)
}

// formList reads a list field: entries separated by commas, spaces or
// lines.
func formList(r *http.Request, field string) []string {
	return strings.FieldsFunc(r.PostFormValue(field), func(c rune) bool {
		return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t'
	})
}

// tenantForm is the policy a tenant form posts.
func tenantForm(r *http.Request, name string) TenantView {
	return TenantView{
		Name: name, AllowedNames: formList(r, "allowed_names"), DeniedNames: formList(r, "denied_names"),
		Wildcards: r.PostFormValue("wildcards") == "yes", AllowedIPRanges: formList(r, "allowed_ip_ranges"),
		Profiles: formList(r, "profiles"), ChallengeTypes: formList(r, "challenge_types"),
		DelegatedZones: formList(r, "delegated_zones"),
		MaxLifetime:    strings.TrimSpace(r.PostFormValue("max_lifetime")),
	}
}

func (s *Server) postTenantCreate(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	t, err := tenantForm(r, name).Tenant()
	if err == nil {
		if _, err = s.cfg.Service.CreateTenant(r.Context(), t); err == nil {
			s.logAction(r.Context(), "admin: tenant created", "tenant", name)
			s.afterPost(w, r, "/tenants/"+url.PathEscape(name), "created tenant "+name, nil)
			return
		}
	}
	s.afterPost(w, r, "/tenants", "", err)
}

func (s *Server) pageTenant(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	rep, err := s.TenantReportOf(r, name)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "tenant", "Tenant "+name, rep)
}

func (s *Server) postTenantUpdate(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	back := "/tenants/" + url.PathEscape(name)
	t, err := tenantForm(r, name).Tenant()
	if err == nil {
		if _, err = s.cfg.Service.UpdateTenant(r.Context(), t); err == nil {
			s.logAction(r.Context(), "admin: tenant updated", "tenant", name)
		}
	}
	s.afterPost(w, r, back, "updated tenant "+name, err)
}

func (s *Server) postTenantDelete(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if r.PostFormValue("confirm") != "yes" {
		s.afterPost(w, r, "/tenants/"+url.PathEscape(name), "", badRequest("tick the confirmation box to delete tenant %s", name))
		return
	}
	if err := s.cfg.Service.DeleteTenant(r.Context(), name); err != nil {
		s.afterPost(w, r, "/tenants/"+url.PathEscape(name), "", err)
		return
	}
	s.logAction(r.Context(), "admin: tenant deleted", "tenant", name)
	s.afterPost(w, r, "/tenants", "deleted tenant "+name, nil)
}
