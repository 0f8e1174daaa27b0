package acme

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

// scopedList is numberedList with ScopedRevocations, counting the
// scopes it lists.
type scopedList struct {
	*numberedList
	listed map[CRLScope]int
}

func (s *scopedList) RevokedCounts(context.Context) (map[CRLScope]int64, error) {
	s.revokedList.mu.Lock()
	defer s.revokedList.mu.Unlock()
	out := map[CRLScope]int64{}
	for _, r := range s.revoked {
		out[CRLScope{Issuer: r.Issuer, Shard: r.Shard}]++
	}
	return out, nil
}

func (s *scopedList) ListRevokedScope(_ context.Context, sc CRLScope, _ time.Time) ([]Revocation, error) {
	s.revokedList.mu.Lock()
	defer s.revokedList.mu.Unlock()
	s.listed[sc]++
	var out []Revocation
	for _, r := range s.revoked {
		if r.Issuer == sc.Issuer && r.Shard == sc.Shard {
			out = append(out, r)
		}
	}
	return out, nil
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
	store := &scopedList{numberedList: &numberedList{countingList: countingList{&revokedList{}}}, listed: map[CRLScope]int{}}
	s := &Service{store: store, ca: issuer, cfg: Config{CRLInterval: time.Hour}, now: func() time.Time { return clock },
		log: slog.New(slog.DiscardHandler), crl: &crlCache{}}
	revoke := func(serial string, shard int) {
		store.revoked = append(store.revoked, Revocation{Serial: serial, RevokedAt: clock, Reason: 1, Issuer: DefaultIssuer, Shard: shard})
		store.total++
	}
	revoke("0a", 0) // issued before sharding
	revoke("1a", 1)
	revoke("2a", 2)
	revoke("2b", 2)
	read := func(shard int) *x509.RevocationList {
		t.Helper()
		der, _, err := s.ShardCRL(t.Context(), DefaultIssuer, shard)
		if err != nil {
			t.Fatalf("ShardCRL(%d): %v", shard, err)
		}
		rl, err := x509.ParseRevocationList(der)
		if err != nil {
			t.Fatal(err)
		}
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
	if _, _, err := s.ShardCRL(t.Context(), DefaultIssuer, 4); err == nil {
		t.Error("ShardCRL(4) of 3 shards: no error")
	}

	// A revocation in shard 3: only shard 3's CRL is listed and remade.
	for k := range store.listed {
		store.listed[k] = 0
	}
	signed := s.CRLsSigned()
	revoke("3a", 3)
	if n := len(read(3).RevokedCertificateEntries); n != 1 {
		t.Errorf("shard 3 after its revocation lists %d, want 1", n)
	}
	for shard := range 3 {
		if got := read(shard).Number.Int64(); got != numbers[shard] {
			t.Errorf("shard %d was remade (number %d, was %d) for a revocation in shard 3", shard, got, numbers[shard])
		}
	}
	after := s.CRLsSigned()
	for shard := range 4 {
		sc := CRLScope{Issuer: DefaultIssuer, Shard: shard}
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
