// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

// shardCRL reads and parses the CRL of the default issuer's shard.
func shardCRL(t *testing.T, s *Maker, shard int) *x509.RevocationList {
	t.Helper()
	der, _, err := s.Get(t.Context(), Scope{Issuer: defaultIssuer, Shard: shard})
	if err != nil {
		t.Fatalf("Get(shard %d): %v", shard, err)
	}
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}

// TestCRLShards: with shards, each shard's CRL lists the revocations of
// its shard only, names its URL in its issuingDistributionPoint and is
// signed by its issuer; a revocation remakes only its own shard's CRL
// (the others are served as they were), and an old CRL interval remakes
// them all.
func TestCRLShards(t *testing.T) {
	h, err := ca.GenerateHierarchy("shards", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const base = "http://crl.example.internal/crl/default"
	issuer, err := ca.New(ca.Config{Lifetime: time.Hour, CRLURL: base,
		CRLShardURLs: []string{base + "/1", base + "/2", base + "/3"}}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	store := &revokedList{}
	s := maker(store, only(issuer), Config{Interval: time.Hour, Now: func() time.Time { return clock }})
	revoke := func(serial string, shard int) {
		store.revoked = append(store.revoked, Revocation{Serial: serial, RevokedAt: clock, Reason: 1, Issuer: defaultIssuer, Shard: shard})
		store.total++
	}
	revoke("0a", 0) // issued before sharding
	revoke("1a", 1)
	revoke("2a", 2)
	revoke("2b", 2)
	read := func(shard int) *x509.RevocationList {
		t.Helper()
		rl := shardCRL(t, s, shard)
		if err := rl.CheckSignatureFrom(h.Intermediate); err != nil {
			t.Errorf("shard %d: %v", shard, err)
		}
		return rl
	}
	want := map[int]int{0: 1, 1: 1, 2: 2, 3: 0}
	numbers := map[int]int64{}
	for shard, n := range want {
		rl := read(shard)
		if len(rl.RevokedCertificateEntries) != n {
			t.Errorf("shard %d lists %d, want %d", shard, len(rl.RevokedCertificateEntries), n)
		}
		url := base
		if shard > 0 {
			url = fmt.Sprintf("%s/%d", base, shard)
		}
		idp := false
		for _, e := range rl.Extensions {
			idp = idp || (e.Id.Equal([]int{2, 5, 29, 28}) && e.Critical && string(e.Value[len(e.Value)-3-len(url):len(e.Value)-3]) == url)
		}
		if !idp {
			t.Errorf("shard %d: no critical issuingDistributionPoint naming %s", shard, url)
		}
		numbers[shard] = rl.Number.Int64()
	}
	if der, _, err := s.Get(t.Context(), Scope{Issuer: defaultIssuer, Shard: 4}); err != nil || der != nil {
		t.Errorf("Get(shard 4) of 3 shards = %d bytes, %v; want no CRL", len(der), err)
	}

	// A revocation in shard 3: only shard 3's CRL is listed and remade.
	for k := range store.listed {
		store.listed[k] = 0
	}
	signed := s.Signed()
	revoke("3a", 3)
	if n := len(read(3).RevokedCertificateEntries); n != 1 {
		t.Errorf("shard 3 after its revocation lists %d, want 1", n)
	}
	for shard := range 3 {
		if got := read(shard).Number.Int64(); got != numbers[shard] {
			t.Errorf("shard %d was remade (number %d, was %d) for a revocation in shard 3", shard, got, numbers[shard])
		}
	}
	after := s.Signed()
	for shard := range 4 {
		sc := Scope{Issuer: defaultIssuer, Shard: shard}
		wantSigned := signed[sc]
		if shard == 3 {
			wantSigned++
		}
		if after[sc] != wantSigned {
			t.Errorf("shard %d: %d CRLs signed, want %d", shard, after[sc], wantSigned)
		}
		if wantListed := map[bool]int{true: 1, false: 0}[shard == 3]; store.listed[sc] != wantListed {
			t.Errorf("shard %d listed %d times, want %d", shard, store.listed[sc], wantListed)
		}
	}
	// An interval later, every shard is remade.
	clock = clock.Add(time.Hour)
	for shard := range 4 {
		if got := read(shard).Number.Int64(); got <= numbers[shard] {
			t.Errorf("shard %d an interval later has number %d, want more than %d", shard, got, numbers[shard])
		}
	}
}

// TestCRLShardsKept: shards kept for older certificates (no new one
// names them) have their CRLs made and served like the others, each
// naming its URL; and shard 0's CRL, now one partition among others,
// names its URL too, so that no relying party takes it for the issuer's
// whole CRL.
func TestCRLShardsKept(t *testing.T) {
	h, err := ca.GenerateHierarchy("kept", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const base = "http://crl.example.internal/crl/default"
	issuer, err := ca.New(ca.Config{Lifetime: time.Hour, CRLURL: base, KeptCRLShardURLs: []string{base + "/1", base + "/2"}}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := &revokedList{}
	store.revoked = append(store.revoked, Revocation{Serial: "2a", RevokedAt: time.Now(), Reason: 1, Issuer: defaultIssuer, Shard: 2})
	store.total++
	s := maker(store, only(issuer), Config{Interval: time.Hour})
	for shard, url := range []string{base, base + "/1", base + "/2"} {
		rl := shardCRL(t, s, shard)
		if !strings.Contains(string(rl.RawTBSRevocationList), url) {
			t.Errorf("shard %d: the CRL does not name %s", shard, url)
		}
		if want := map[bool]int{true: 1}[shard == 2]; len(rl.RevokedCertificateEntries) != want {
			t.Errorf("shard %d lists %d, want %d", shard, len(rl.RevokedCertificateEntries), want)
		}
	}
	if der, _, err := s.Get(t.Context(), Scope{Issuer: defaultIssuer, Shard: 3}); err != nil || der != nil {
		t.Errorf("Get(shard 3) of 2 kept shards = %d bytes, %v; want no CRL", len(der), err)
	}
	// A certificate issued now names the issuer's one CRL.
	iss, err := issuer.Issue(ca.IssueRequest{PublicKey: h.IntermediateKey.Public(), DNSNames: []string{"new.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if iss.CRLShard != 0 || len(iss.Cert.CRLDistributionPoints) != 1 || iss.Cert.CRLDistributionPoints[0] != base {
		t.Errorf("a new certificate names shard %d, %v; want the one CRL %s", iss.CRLShard, iss.Cert.CRLDistributionPoints, base)
	}
}
