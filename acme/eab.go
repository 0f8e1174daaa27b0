// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// External Account Binding (RFC 8555 §7.3.4). An administrator creates a
// key: an ID, a label and an HMAC key, given to whoever may enroll. A
// new-account request carries an externalAccountBinding, a JWS over the
// account key MACed with the HMAC key; acme/jws checks its form, Service
// checks its MAC and that the key is usable, and the Store binds the key
// to the new account in the transaction that creates it, so a key binds
// exactly once. When acme.external-account-binding.required is set, a new
// account without a binding is refused with externalAccountRequired.

// ErrEABUnusable is the error, wrapped, of a Store's CreateAccount whose
// EABKeyID names a key that is unknown, revoked or already bound: nothing
// was written.
var ErrEABUnusable = errors.New("the external account binding key is unknown, revoked or already bound")

// EABKey is an External Account Binding key.
type EABKey struct {
	// ID is the key identifier clients send as the binding's "kid".
	ID string
	// Label names the group the key belongs to, e.g. a team; rate-limit
	// overrides keyed "eab:LABEL" apply to the accounts bound with it.
	Label string
	// Tenant is the tenant the key, and the account bound with it, belong
	// to; "" for the default tenant (ca.policy alone).
	Tenant string
	// HMACKey is the MAC key. It is shown to the administrator once, at
	// creation, and never listed.
	HMACKey   []byte
	CreatedAt time.Time
	// BoundAccount is the ID of the account created with the key; "" while
	// unbound.
	BoundAccount AccountID
	BoundAt      time.Time // zero while unbound
	RevokedAt    time.Time // zero unless revoked
}

// Bound reports whether an account was created with the key.
func (k *EABKey) Bound() bool { return k.BoundAccount != "" }

// Revoked reports whether the key was revoked.
func (k *EABKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// EABStore keeps External Account Binding keys. A Store that implements it
// also binds keys in CreateAccount: when Account.EABKeyID is set, the key
// is bound to the new account in the same transaction, compare-and-set on
// the key being unbound and unrevoked, and otherwise nothing is written
// and the error wraps ErrEABUnusable. storage/storagetest checks both.
type EABStore interface {
	// CreateEABKey stores a new key. ErrConflict if its ID exists.
	CreateEABKey(ctx context.Context, k *EABKey) error
	// GetEABKey returns a key by ID. ErrNotFound if there is none.
	GetEABKey(ctx context.Context, id string) (*EABKey, error)
	// ListEABKeys returns the keys with the given label ("" for every
	// label), newest first.
	ListEABKeys(ctx context.Context, label string) ([]*EABKey, error)
	// RevokeEABKey marks a key revoked at the given time, so that it never
	// binds; an account already bound with it is not affected.
	// ErrNotFound if there is no such key, ErrConflict if it is revoked.
	RevokeEABKey(ctx context.Context, id string, at time.Time) error
}

// EABConfig is the acme.external-account-binding block.
type EABConfig struct {
	// Required refuses new accounts without an External Account Binding
	// (externalAccountRequired), and says so in the directory's meta. A
	// binding is checked whenever one is sent.
	Required bool `yaml:"required"`
}

// EABBinding is the externalAccountBinding of a new-account request once
// acme/jws has checked its form: a flattened JWS with an HMAC algorithm,
// the "url" of the request, no "nonce", and the request's account key as
// its payload. Its MAC is checked by Service, which has the key.
type EABBinding interface {
	// KeyID is the "kid" of the binding: the EAB key it claims.
	KeyID() string
	// VerifyMAC checks the MAC with hmacKey, returning a problem if it
	// does not verify.
	VerifyMAC(hmacKey []byte) error
}

// CheckEABLabel reports why label cannot label an EAB key: the rule of
// tenant names (checkGroupName), so that "eab:LABEL" is a plain
// rate-limit override key.
func CheckEABLabel(label string) error {
	if err := checkGroupName(label); err != nil {
		return fmt.Errorf("the label: %w", err)
	}
	return nil
}

// EABOverrideKey is the rate-limit override key of the accounts bound with
// a key of label (ratelimit.Request.OverrideKey): "eab:LABEL".
func EABOverrideKey(label string) string { return "eab:" + label }

// TenantOverrideKey is the rate-limit override key of the accounts bound
// with a key of tenant name: "tenant:NAME". An account's label wins over
// its tenant (GroupOverrideKey).
func TenantOverrideKey(name string) string { return "tenant:" + name }

// GroupOverrideKey is the group override key of the accounts bound with
// key k (ratelimit.Request.OverrideKey): "eab:LABEL tenant:NAME", the
// label's overrides before the tenant's; "" for none.
func GroupOverrideKey(k *EABKey) string {
	if k == nil {
		return ""
	}
	var label, tenant string
	if k.Label != "" {
		label = EABOverrideKey(k.Label)
	}
	if k.Tenant != "" {
		tenant = TenantOverrideKey(k.Tenant)
	}
	return ratelimit.GroupKeys(label, tenant)
}

// eabStore returns the store's EAB keys; false if it keeps none.
func (s *Service) eabStore() (EABStore, bool) {
	k, ok := s.store.(EABStore)
	return k, ok
}

// checkEAB decides the binding of a new account (RFC 8555 §7.3.4) and
// returns the ID of the key to bind, "" for none. The key is bound by
// CreateAccount, which refuses it if it was bound or revoked meanwhile.
func (s *Service) checkEAB(ctx context.Context, b EABBinding) (string, error) {
	if b == nil {
		if s.cfg.EAB.Required {
			return "", NewProblem(ProbExternalAccountRequired, "this server requires an External Account Binding for new accounts (RFC 8555 §7.3.4); ask its administrators for a key ID and HMAC key")
		}
		return "", nil
	}
	keys, ok := s.eabStore()
	if !ok {
		return "", Unauthorized("this server keeps no External Account Binding keys")
	}
	k, err := keys.GetEABKey(ctx, b.KeyID())
	switch {
	case errors.Is(err, ErrNotFound):
		return "", Unauthorized("externalAccountBinding: the key %q is unknown", b.KeyID())
	case err != nil:
		return "", Internal(err)
	}
	// The MAC first: without the HMAC key, nobody learns whether a key is
	// bound or revoked.
	if err := b.VerifyMAC(k.HMACKey); err != nil {
		return "", err
	}
	switch {
	case k.Revoked():
		return "", Unauthorized("externalAccountBinding: the key %q is revoked", k.ID)
	case k.Bound():
		return "", Unauthorized("externalAccountBinding: the key %q is already bound to an account; each key binds once", k.ID)
	}
	return k.ID, nil
}

// eabBindFailed is the problem of a CreateAccount that lost its key to a
// concurrent binding or a revocation after checkEAB.
func eabBindFailed(keyID string, err error) *Problem {
	p := Unauthorized("externalAccountBinding: the key %q is already bound to an account or revoked; each key binds once", keyID)
	p.Cause = err
	return p
}

// CreateEABKey makes a new EAB key of tenant ("" for the default one)
// with a random ID and a random 256-bit HMAC key (an administrator's
// action). The result carries the HMAC key, which nothing shows again.
func (s *Service) CreateEABKey(ctx context.Context, label, tenant string) (*EABKey, error) {
	if err := CheckEABLabel(label); err != nil {
		return nil, Malformed("%v", err)
	}
	keys, ok := s.eabStore()
	if !ok {
		return nil, Internal(errors.New("acme: the store keeps no EAB keys"))
	}
	if tenant != "" {
		if _, err := s.GetTenant(ctx, tenant); err != nil {
			return nil, err
		}
	}
	k := &EABKey{ID: noLeadingDash(16), Label: label, Tenant: tenant, CreatedAt: s.now().UTC()}
	// The HMAC key's base64url form must not start with '-' either: a
	// command line would take it for a flag.
	for range 64 {
		k.HMACKey = randomBytes(32)
		if k.HMACKey[0]>>2 != 62 { // the first character is not '-'
			break
		}
	}
	if err := keys.CreateEABKey(ctx, k); err != nil {
		return nil, Internal(err)
	}
	return k, nil
}

// ListEABKeys lists the EAB keys with label ("" for all), newest first.
func (s *Service) ListEABKeys(ctx context.Context, label string) ([]*EABKey, error) {
	keys, ok := s.eabStore()
	if !ok {
		return nil, Internal(errors.New("acme: the store keeps no EAB keys"))
	}
	out, err := keys.ListEABKeys(ctx, label)
	if err != nil {
		return nil, Internal(err)
	}
	return out, nil
}

// RevokeEABKey revokes an EAB key so that it never binds (an
// administrator's action). An account already bound with it keeps working:
// deactivate the account to stop it.
func (s *Service) RevokeEABKey(ctx context.Context, id string) (*EABKey, error) {
	keys, ok := s.eabStore()
	if !ok {
		return nil, Internal(errors.New("acme: the store keeps no EAB keys"))
	}
	if err := keys.RevokeEABKey(ctx, id, s.now().UTC()); err != nil {
		if errors.Is(err, ErrConflict) {
			p := Malformed("EAB key %s is already revoked", id)
			p.Status = http.StatusConflict
			return nil, p
		}
		return nil, storeErr(err, "EAB key %s", id)
	}
	k, err := keys.GetEABKey(ctx, id)
	if err != nil {
		return nil, Internal(err)
	}
	return k, nil
}

// noLeadingDash returns randomString(n) that does not start with '-', so
// that it can follow a flag on a command line.
func noLeadingDash(n int) string {
	s := randomString(n)
	for i := 0; i < 64 && s[0] == '-'; i++ {
		s = randomString(n)
	}
	return s
}

// randomBytes returns n bytes from crypto/rand.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("acme: crypto/rand failed: %v", err))
	}
	return b
}

// eabOverrideKey is the group override key (GroupOverrideKey) of acct's
// limits, read from the store, "" when acct was created without an EAB
// key (the administrators' path; acme/limits caches it).
func (s *Service) eabOverrideKey(ctx context.Context, acct *Account) string {
	keys, ok := s.eabStore()
	if !ok || acct.EABKeyID == "" {
		return ""
	}
	k, err := keys.GetEABKey(ctx, acct.EABKeyID)
	switch {
	case errors.Is(err, ErrNotFound):
		return ""
	case err != nil:
		s.log.Warn("looking up the EAB label of an account", "account", acct.ID, "err", err)
		return ""
	}
	return GroupOverrideKey(k)
}
