// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// tenantStore returns the store's acme.TenantStore; every Store must have
// one.
func (f *fixture) tenantStore(t *testing.T) acme.TenantStore {
	t.Helper()
	ts, ok := f.s.(acme.TenantStore)
	if !ok {
		t.Fatalf("%T does not implement acme.TenantStore", f.s)
	}
	return ts
}

// testTenants checks CreateTenant, GetTenant, ListTenants, UpdateTenant
// and DeleteTenant, an EAB key's tenant, and that a tenant a key names
// cannot be deleted.
func testTenants(t *testing.T, f *fixture) {
	ts := f.tenantStore(t)
	a := &acme.Tenant{
		Name: "team-a", AllowedNames: []string{".a.example", "host.example"}, DeniedNames: []string{".secret.a.example"},
		Wildcards: true, AllowedIPRanges: []string{"10.1.0.0/16"}, Profiles: []string{"tls"},
		ChallengeTypes: []acme.ChallengeType{acme.ChallengeDNS01}, MaxLifetime: 72 * time.Hour,
		DelegatedZones: []string{".auto.a.example"},
		CreatedAt:      at(time.Second), UpdatedAt: at(time.Second),
	}
	b := &acme.Tenant{Name: "team-b", AllowedNames: []string{".b.example"}, CreatedAt: at(2 * time.Second), UpdatedAt: at(2 * time.Second)}
	for _, tn := range []*acme.Tenant{b, a} {
		if err := ts.CreateTenant(f.ctx, tn); err != nil {
			t.Fatalf("CreateTenant(%s): %v", tn.Name, err)
		}
	}
	wantErr(t, "CreateTenant(duplicate)", ts.CreateTenant(f.ctx, &acme.Tenant{Name: "team-a", CreatedAt: at(0), UpdatedAt: at(0)}), acme.ErrConflict)
	got, err := ts.GetTenant(f.ctx, "team-a")
	if err != nil {
		t.Fatalf("GetTenant: %v", err)
	}
	checkTenant(t, "GetTenant", got, a)
	_, err = ts.GetTenant(f.ctx, "team-z")
	wantErr(t, "GetTenant(unknown)", err, acme.ErrNotFound)

	list, err := ts.ListTenants(f.ctx)
	if err != nil || len(list) != 2 || list[0].Name != "team-a" || list[1].Name != "team-b" {
		t.Fatalf("ListTenants: %d tenants, err %v; want team-a, team-b", len(list), err)
	}
	checkTenant(t, "ListTenants[1]", list[1], b)

	// An update replaces the policy and keeps CreatedAt.
	narrowed := *a
	narrowed.AllowedNames, narrowed.Wildcards, narrowed.MaxLifetime, narrowed.DelegatedZones = []string{"host.example"}, false, 0, nil
	narrowed.CreatedAt, narrowed.UpdatedAt = at(time.Hour), at(time.Hour)
	if err := ts.UpdateTenant(f.ctx, &narrowed); err != nil {
		t.Fatalf("UpdateTenant: %v", err)
	}
	got, _ = ts.GetTenant(f.ctx, "team-a")
	want := narrowed
	want.CreatedAt = a.CreatedAt
	checkTenant(t, "GetTenant after UpdateTenant", got, &want)
	wantErr(t, "UpdateTenant(unknown)", ts.UpdateTenant(f.ctx, &acme.Tenant{Name: "team-z", CreatedAt: at(0), UpdatedAt: at(0)}), acme.ErrNotFound)

	// A key names its tenant, and the tenant cannot go while it does.
	k := &acme.EABKey{ID: f.id("kid"), Label: "l", Tenant: "team-b", HMACKey: []byte("k"), CreatedAt: at(0)}
	if err := f.eabStore(t).CreateEABKey(f.ctx, k); err != nil {
		t.Fatalf("CreateEABKey: %v", err)
	}
	gotKey, err := f.eabStore(t).GetEABKey(f.ctx, k.ID)
	if err != nil || gotKey.Tenant != "team-b" {
		t.Fatalf("GetEABKey: tenant %q, err %v; want team-b", gotKey.Tenant, err)
	}
	wantErr(t, "DeleteTenant(named by a key)", ts.DeleteTenant(f.ctx, "team-b"), acme.ErrConflict)
	if err := ts.DeleteTenant(f.ctx, "team-a"); err != nil {
		t.Fatalf("DeleteTenant: %v", err)
	}
	_, err = ts.GetTenant(f.ctx, "team-a")
	wantErr(t, "GetTenant(deleted)", err, acme.ErrNotFound)
	wantErr(t, "DeleteTenant(unknown)", ts.DeleteTenant(f.ctx, "team-a"), acme.ErrNotFound)
}

// checkTenant compares every field of two tenants.
func checkTenant(t *testing.T, what string, got, want *acme.Tenant) {
	t.Helper()
	var d diffs
	add(&d, "Name", got.Name, want.Name)
	add(&d, "Wildcards", got.Wildcards, want.Wildcards)
	add(&d, "MaxLifetime", got.MaxLifetime, want.MaxLifetime)
	for _, l := range []struct {
		name      string
		got, want any
	}{
		{"AllowedNames", got.AllowedNames, want.AllowedNames},
		{"DeniedNames", got.DeniedNames, want.DeniedNames},
		{"AllowedIPRanges", got.AllowedIPRanges, want.AllowedIPRanges},
		{"Profiles", got.Profiles, want.Profiles},
		{"ChallengeTypes", got.ChallengeTypes, want.ChallengeTypes},
		{"DelegatedZones", got.DelegatedZones, want.DelegatedZones},
	} {
		if !reflect.DeepEqual(l.got, l.want) {
			add(&d, l.name, fmt.Sprint(l.got), fmt.Sprint(l.want))
		}
	}
	d.addTime("CreatedAt", got.CreatedAt, want.CreatedAt)
	d.addTime("UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	d.report(t, what)
}
