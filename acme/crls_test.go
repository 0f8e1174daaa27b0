// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"crypto/x509"
	"net/http"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// TestServiceCRLs: what the Service adds to acme/crl. The CRL it serves
// as CurrentCRL is the default issuer's, while another issuer is active;
// CRLShards counts the shards kept for older certificates; an unknown
// issuer is a 404 Problem, and so is a shard beyond an issuer's shards,
// configured or kept.
func TestServiceCRLs(t *testing.T) {
	newCA := func(cfg ca.Config) *ca.CA {
		t.Helper()
		h, err := ca.GenerateHierarchy("crl service test", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c, err := ca.New(cfg, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const base = "http://crl.example.internal/crl/"
	old := newCA(ca.Config{Lifetime: time.Hour, CRLURL: base + "default",
		KeptCRLShardURLs: []string{base + "default/1", base + "default/2"}})
	cur := newCA(ca.Config{Lifetime: time.Hour, CRLURL: base + "r2",
		CRLShardURLs: []string{base + "r2/1", base + "r2/2", base + "r2/3"}})
	policy, err := acme.NewPolicy(acme.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := acme.New(acme.Config{}, acme.Live{Policy: policy}, acme.Deps{Store: openSQLite(t), CA: cur,
		Issuers: []acme.Issuer{{ID: acme.DefaultIssuer, CA: old}, {ID: "r2", CA: cur}}, Validator: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, active := svc.Issuers(); active != "r2" {
		t.Errorf("active issuer %q, want r2", active)
	}
	if der, _, err := svc.CurrentCRL(t.Context()); err != nil {
		t.Fatal(err)
	} else if rl, _ := x509.ParseRevocationList(der); rl == nil || rl.CheckSignatureFrom(old.Hierarchy().Intermediate) != nil {
		t.Error("CurrentCRL is not the default issuer's CRL")
	}
	if got := svc.CRLShards(acme.DefaultIssuer); got != 2 {
		t.Errorf("CRLShards = %d, want the 2 kept", got)
	}
	for _, c := range []struct {
		issuer string
		shard  int
	}{{"nope", 0}, {"r2", 4}, {acme.DefaultIssuer, 3}, {"r2", -1}} {
		_, _, err := svc.ShardCRL(t.Context(), c.issuer, c.shard)
		if p, ok := err.(*acme.Problem); !ok || p.Status != http.StatusNotFound {
			t.Errorf("ShardCRL(%q, %d) = %v, want a 404 problem", c.issuer, c.shard, err)
		}
	}
	for shard := range 4 {
		if der, _, err := svc.ShardCRL(t.Context(), "r2", shard); err != nil || len(der) == 0 {
			t.Errorf("ShardCRL(r2, %d) = %d bytes, %v; want its CRL", shard, len(der), err)
		}
	}
}
