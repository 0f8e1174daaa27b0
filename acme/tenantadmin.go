// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"net/http"
)

// The administrators' tenant actions (weir tenant, the admin API). A
// policy is validated whole (Tenant.Validate) and stored canonical; an
// update replaces it, and applies to the next new-order and finalize of
// the tenant's accounts (of another replica: its next finalize, and its
// new-orders within tenantCacheTTL, tenantlookup.go).

// errNoTenants is the error of a tenant action on a store without tenants.
var errNoTenants = errors.New("acme: the store keeps no tenants")

// validTenant returns the store's tenants and t validated, or the
// problem.
func (s *Service) validTenant(t Tenant) (TenantStore, Tenant, error) {
	store, ok := s.tenantStore()
	if !ok {
		return nil, t, Internal(errNoTenants)
	}
	v, err := t.Validate(s.cfg.Challenges)
	if err != nil {
		return nil, t, Malformed("%v", err)
	}
	return store, v, nil
}

// CreateTenant validates and stores a new tenant.
func (s *Service) CreateTenant(ctx context.Context, t Tenant) (*Tenant, error) {
	store, v, err := s.validTenant(t)
	if err != nil {
		return nil, err
	}
	v.CreatedAt = s.now().UTC()
	v.UpdatedAt = v.CreatedAt
	if err := store.CreateTenant(ctx, &v); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, conflict("tenant %q already exists", v.Name)
		}
		return nil, Internal(err)
	}
	return &v, nil
}

// UpdateTenant validates t and replaces the policy of the tenant of its
// name.
func (s *Service) UpdateTenant(ctx context.Context, t Tenant) (*Tenant, error) {
	store, v, err := s.validTenant(t)
	if err != nil {
		return nil, err
	}
	v.UpdatedAt = s.now().UTC()
	err = store.UpdateTenant(ctx, &v)
	s.forgetTenant(v.Name)
	if err != nil {
		return nil, storeErr(err, "tenant %q", v.Name)
	}
	return s.GetTenant(ctx, v.Name)
}

// GetTenant returns a tenant; notFound if there is none.
func (s *Service) GetTenant(ctx context.Context, name string) (*Tenant, error) {
	store, ok := s.tenantStore()
	if !ok {
		return nil, Internal(errNoTenants)
	}
	t, err := store.GetTenant(ctx, name)
	if err != nil {
		return nil, storeErr(err, "tenant %q", name)
	}
	return t, nil
}

// ListTenants returns every tenant, by name.
func (s *Service) ListTenants(ctx context.Context) ([]*Tenant, error) {
	store, ok := s.tenantStore()
	if !ok {
		return nil, Internal(errNoTenants)
	}
	ts, err := store.ListTenants(ctx)
	if err != nil {
		return nil, Internal(err)
	}
	return ts, nil
}

// DeleteTenant removes a tenant no EAB key belongs to.
func (s *Service) DeleteTenant(ctx context.Context, name string) error {
	store, ok := s.tenantStore()
	if !ok {
		return Internal(errNoTenants)
	}
	err := store.DeleteTenant(ctx, name)
	s.forgetTenant(name)
	if err != nil {
		if errors.Is(err, ErrConflict) {
			return conflict("tenant %q has EAB keys (revoked ones count): the accounts bound with them keep its policy, so it cannot be deleted", name)
		}
		return storeErr(err, "tenant %q", name)
	}
	return nil
}

// conflict is a malformed problem with status 409.
func conflict(format string, args ...any) *Problem {
	p := Malformed(format, args...)
	p.Status = http.StatusConflict
	return p
}
