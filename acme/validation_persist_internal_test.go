// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// boundedValidator passes every request, bounded by until, and records
// the last request.
type boundedValidator struct {
	until time.Time
	got   ValidationRequest
	calls int
}

func (v *boundedValidator) Validate(ctx context.Context, r ValidationRequest) *Problem {
	_, p := v.ValidateUntil(ctx, r)
	return p
}

func (v *boundedValidator) ValidateUntil(_ context.Context, r ValidationRequest) (time.Time, *Problem) {
	v.got, v.calls = r, v.calls+1
	return v.until, nil
}

// TestValidatePersist: a dns-persist-01 validation gets the account and
// its key and the wildcard flag; its persistUntil caps the
// authorization's expiry (but a later one does not extend it); a
// deactivated account's records do not validate, whatever the validator
// would say (draft-ietf-acme-dns-persist-02 §4.1, §4.2).
func TestValidatePersist(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	const lifetime = 30 * 24 * time.Hour
	issuer := testIssuer(t)
	tests := []struct {
		name        string
		status      Status
		until       time.Time
		wantStatus  Status
		wantExpires time.Time
	}{
		{"no persistUntil", StatusValid, time.Time{}, StatusValid, now.Add(lifetime)},
		{"persistUntil sooner", StatusValid, now.Add(time.Hour), StatusValid, now.Add(time.Hour)},
		{"persistUntil later", StatusValid, now.Add(2 * lifetime), StatusValid, now.Add(lifetime)},
		{"deactivated account", StatusDeactivated, time.Time{}, StatusInvalid, now.Add(time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &oneChallengeStore{
				acct: Account{ID: "7", KeyThumbprint: "thumb", Status: tc.status},
				authz: Authorization{ID: "az", AccountID: "7", Identifier: Identifier{Type: IdentifierDNS, Value: "a.example"},
					Wildcard: true, Status: StatusPending, Expires: now.Add(time.Hour)},
				ch: Challenge{ID: "ch", AuthzID: "az", Type: ChallengeDNSPersist01, Token: "tok", Status: StatusProcessing},
			}
			v := &boundedValidator{until: tc.until}
			s := &Service{cfg: Config{ValidAuthzLifetime: lifetime, Challenges: AllChallengeTypes()}, ca: issuer, store: st, validator: v, limits: NoLimits{}, observer: NopObserver{},
				now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler)}
			if err := s.validate(t.Context(), "ch"); err != nil {
				t.Fatal(err)
			}
			u := st.updated
			if u == nil || u.Status != tc.wantStatus || !u.Expires.Equal(tc.wantExpires) {
				t.Fatalf("stored %+v, want %s expiring %v", u, tc.wantStatus, tc.wantExpires)
			}
			if tc.status != StatusValid {
				if v.calls != 0 {
					t.Errorf("the validator ran for a %s account", tc.status)
				}
				if p := u.Challenges[0].Error; p == nil || p.Type != ProbUnauthorized || !strings.Contains(p.Detail, "account 7 is deactivated") {
					t.Errorf("challenge error %v, want unauthorized naming the deactivated account", p)
				}
				return
			}
			want := ValidationRequest{Identifier: st.authz.Identifier, Wildcard: true, Type: ChallengeDNSPersist01, Token: "tok",
				KeyAuthorization: "tok.thumb", AccountID: "7", Thumbprint: "thumb"}
			if v.got != want {
				t.Errorf("request %+v, want %+v", v.got, want)
			}
		})
	}
}

// TestPersistAuthzNotReused: an authorization validated by dns-persist-01
// is not reused by a later order; one validated by another type is.
func TestPersistAuthzNotReused(t *testing.T) {
	valid := func(t ChallengeType) *Authorization {
		return &Authorization{Status: StatusValid, Challenges: []*Challenge{
			{Type: ChallengeHTTP01, Status: StatusPending}, {Type: t, Status: StatusValid}}}
	}
	if !validatedBy(valid(ChallengeDNSPersist01), ChallengeDNSPersist01) {
		t.Error("validatedBy(dns-persist-01) = false for an authorization it validated")
	}
	if validatedBy(valid(ChallengeDNS01), ChallengeDNSPersist01) {
		t.Error("validatedBy(dns-persist-01) = true for an authorization dns-01 validated")
	}
}

// TestDraftChallengeTypesOffered: a wildcard is offered the three DNS
// types, an IP address none of them.
func TestDraftChallengeTypesOffered(t *testing.T) {
	s := &Service{cfg: Config{Challenges: AllChallengeTypes()}}
	tests := []struct {
		id       Identifier
		wildcard bool
		want     []ChallengeType
	}{
		{Identifier{Type: IdentifierDNS, Value: "a.example"}, false, AllChallengeTypes()},
		{Identifier{Type: IdentifierDNS, Value: "a.example"}, true, []ChallengeType{ChallengeDNS01, ChallengeDNSAccount01, ChallengeDNSPersist01}},
		{Identifier{Type: IdentifierIP, Value: "10.0.0.1"}, false, []ChallengeType{ChallengeHTTP01, ChallengeTLSALPN01}},
	}
	for _, tc := range tests {
		if got := s.challengeTypes(nil, tc.id, tc.wildcard); !slices.Equal(got, tc.want) {
			t.Errorf("challengeTypes(%v, wildcard %v) = %v, want %v", tc.id, tc.wildcard, got, tc.want)
		}
	}
}

// TestTenantDraftChallengeTypes: a tenant may allow the draft types when
// the server offers them, and a tenant allowing only dns-persist-01 still
// gets wildcards validated.
func TestTenantDraftChallengeTypes(t *testing.T) {
	tn, err := Tenant{Name: "t", ChallengeTypes: []ChallengeType{ChallengeDNSPersist01, ChallengeDNSAccount01}}.Validate(AllChallengeTypes())
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if _, err := (Tenant{Name: "t", ChallengeTypes: []ChallengeType{ChallengeDNSPersist01}}).Validate([]ChallengeType{ChallengeHTTP01, ChallengeDNS01}); err == nil ||
		!strings.Contains(err.Error(), `"dns-persist-01" is not a challenge type this server offers`) {
		t.Errorf("a type the server does not offer: got %v", err)
	}
	s := &Service{cfg: Config{Challenges: AllChallengeTypes()}}
	wild := Identifier{Type: IdentifierDNS, Value: "*.a.example"}
	if p := s.checkTenantChallenges(&tn, wild); p != nil {
		t.Errorf("a wildcard for a tenant of the DNS drafts: %v", p)
	}
	base, _ := wild.SplitWildcard()
	if got, want := s.challengeTypes(&tn, base, true), []ChallengeType{ChallengeDNSAccount01, ChallengeDNSPersist01}; !slices.Equal(got, want) {
		t.Errorf("challengeTypes: got %v, want %v", got, want)
	}
}
