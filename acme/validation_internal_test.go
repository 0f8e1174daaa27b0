// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

// testIssuer is the CA of the Services these tests build by hand.
func testIssuer(t *testing.T) *ca.CA {
	t.Helper()
	hierarchy, err := ca.GenerateHierarchy("acme validation test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.New(ca.Config{Lifetime: time.Hour}, hierarchy, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// oneChallengeStore holds one account, authorization and challenge: what
// validate reads and writes.
type oneChallengeStore struct {
	Store
	acct    Account
	authz   Authorization
	ch      Challenge
	updated *Authorization
}

func (s *oneChallengeStore) GetChallenge(context.Context, ChallengeID) (*Challenge, error) {
	c := s.ch
	return &c, nil
}

func (s *oneChallengeStore) GetAuthz(context.Context, AuthzID) (*Authorization, error) {
	a := s.authz
	ch := s.ch
	a.Challenges = []*Challenge{&ch}
	return &a, nil
}

func (s *oneChallengeStore) GetAccount(context.Context, AccountID) (*Account, error) {
	a := s.acct
	return &a, nil
}

func (s *oneChallengeStore) UpdateAuthz(_ context.Context, a *Authorization, _ Status) error {
	s.updated = a
	return nil
}

// keyAuthValidator passes when the key authorization is the expected one.
type keyAuthValidator struct{ want, got string }

func (v *keyAuthValidator) Validate(_ context.Context, r ValidationRequest) *Problem {
	v.got = r.KeyAuthorization
	if r.KeyAuthorization != v.want {
		return NewProblem(ProbIncorrectResponse, "key authorization %q", r.KeyAuthorization)
	}
	return nil
}

// TestValidateUsesCurrentKey: a replica whose account cache still holds
// the key from before a key change made on another replica validates with
// the current key's thumbprint (RFC 8555 §8.1), read from the store.
func TestValidateUsesCurrentKey(t *testing.T) {
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &oneChallengeStore{
		acct:  Account{ID: "7", KeyThumbprint: "new-thumbprint", Status: StatusValid},
		authz: Authorization{ID: "az", AccountID: "7", Identifier: Identifier{Type: IdentifierDNS, Value: "a.example"}, Status: StatusPending, Expires: now.Add(time.Hour)},
		ch:    Challenge{ID: "ch", AuthzID: "az", Type: ChallengeHTTP01, Token: "tok", Status: StatusProcessing},
	}
	v := &keyAuthValidator{want: "tok.new-thumbprint"}
	s := &Service{cfg: Config{Challenges: AllChallengeTypes()}, ca: testIssuer(t), store: st, validator: v, limits: NoLimits{}, observer: NopObserver{}, now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler)}
	s.accounts.m = map[AccountID]cachedAccount{"7": {acct: Account{ID: "7", KeyThumbprint: "old-thumbprint", Status: StatusValid}, fetched: now}}
	if err := s.validate(t.Context(), "ch"); err != nil {
		t.Fatal(err)
	}
	if v.got != v.want {
		t.Errorf("validated with key authorization %q, want %q", v.got, v.want)
	}
	if st.updated == nil || st.updated.Status != StatusValid {
		t.Errorf("the authorization was stored as %+v, want valid", st.updated)
	}
}
