// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/go-chi/chi/v5"
)

// The report of one tenant, which the tenant page shows and
// GET /api/v1/tenants/{name}/report answers: its policy, its EAB keys and
// the accounts bound with them, each account's buckets against its
// limits, the tenant's recent refusals on this replica by rule, and its
// most recent certificates.

const (
	// tenantAccountsShown is how many of its accounts the report shows
	// with their buckets.
	tenantAccountsShown = 20
	// tenantCertsShown is how many certificates the report lists, and
	// how many it reads of each account.
	tenantCertsShown = 20
	// tenantRefusalsShown is how many recent refusals it lists.
	tenantRefusalsShown = 50
)

// TenantReport is one tenant with what belongs to it.
type TenantReport struct {
	Tenant  TenantView   `json:"tenant"`
	EABKeys []EABKeyView `json:"eab_keys"`
	// Accounts are the accounts bound with its keys (the first
	// tenantAccountsShown), with their buckets; AccountsMore says there
	// are more.
	Accounts     []TenantAccount `json:"accounts"`
	AccountsMore bool            `json:"accounts_more,omitempty"`
	// RefusalsByRule counts its refusals on this replica since the start,
	// by the rule of its policy that refused.
	RefusalsByRule map[string]uint64 `json:"refusals_by_rule"`
	Refusals       []RefusalView     `json:"recent_refusals"`
	// Certificates are its accounts' most recent certificates.
	Certificates []CertView `json:"certificates"`
	// Warning is TenantsEABWarning: accounts made without an EAB key can
	// still get its names.
	Warning string `json:"warning,omitempty"`
}

// TenantAccount is an account of a tenant with its buckets.
type TenantAccount struct {
	ID      string       `json:"id"`
	KeyID   string       `json:"eab_key_id"`
	Buckets []BucketView `json:"buckets"`
	// BucketErr is why the buckets could not be read.
	BucketErr string `json:"bucket_error,omitempty"`
}

// TenantReportOf gathers the report of tenant name.
func (s *Server) TenantReportOf(r *http.Request, name string) (*TenantReport, error) {
	ctx := r.Context()
	t, err := s.cfg.Service.GetTenant(ctx, name)
	if err != nil {
		return nil, err
	}
	rep := &TenantReport{Tenant: tenantView(t), EABKeys: []EABKeyView{}, Accounts: []TenantAccount{}, Certificates: []CertView{},
		Warning: s.tenantsEABWarning(1)}
	keys, err := s.EABKeys(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, k := range keys.Items {
		if k.Tenant != name {
			continue
		}
		rep.EABKeys = append(rep.EABKeys, k)
		if k.BoundAccount == "" {
			continue
		}
		if len(rep.Accounts) == tenantAccountsShown {
			rep.AccountsMore = true
			continue
		}
		a := TenantAccount{ID: k.BoundAccount, KeyID: k.KeyID, Buckets: []BucketView{}}
		if b, err := s.Status(ctx, StatusQuery{Account: a.ID}); err != nil {
			_, a.BucketErr = s.failStatus(r, err)
		} else {
			a.Buckets = b
		}
		rep.Accounts = append(rep.Accounts, a)
		certs, err := s.Certs(withQuery(r, url.Values{"account": {a.ID}, "limit": {fmt.Sprint(tenantCertsShown)}}))
		if err != nil {
			return nil, err
		}
		rep.Certificates = append(rep.Certificates, certs.Items...)
	}
	slices.SortFunc(rep.Certificates, func(a, b CertView) int {
		return cmp.Or(b.IssuedAt.Compare(a.IssuedAt), cmp.Compare(a.Serial, b.Serial))
	})
	rep.Certificates = rep.Certificates[:min(len(rep.Certificates), tenantCertsShown)]
	rep.Refusals, rep.RefusalsByRule = s.cfg.Metrics.TenantRefusals(name, tenantRefusalsShown)
	return rep, nil
}

func (s *Server) apiTenantReport(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.TenantReportOf(r, chi.URLParam(r, "name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
