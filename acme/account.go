// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"strings"
)

// AccountNotValid is the problem of a request authorized by the key of an
// account whose status is not valid: deactivated by its holder or the
// server, or revoked (RFC 8555 §7.1.2). Both are final, and the server
// "MUST NOT accept further requests authorized by that account's key";
// such a request gets 401 unauthorized (RFC 8555 §7.3.6), not the 403 of
// other unauthorized problems.
func AccountNotValid(id AccountID, status Status) *Problem {
	p := Unauthorized("account %s is %s; it accepts no further requests (RFC 8555 §7.3.6)", id, status)
	p.Status = http.StatusUnauthorized
	return p
}

// NewAccountRequest is the payload of new-account (RFC 8555 §7.3).
type NewAccountRequest struct {
	Contact              []string `json:"contact"`
	TermsOfServiceAgreed bool     `json:"termsOfServiceAgreed"`
	OnlyReturnExisting   bool     `json:"onlyReturnExisting"`
	// ExternalAccountBinding is the binding JWS as sent (RFC 8555 §7.3.4).
	ExternalAccountBinding json.RawMessage `json:"externalAccountBinding,omitempty"`
	// Binding is ExternalAccountBinding once acme/jws has checked its
	// form; the front end sets it. nil means no binding.
	Binding EABBinding `json:"-"`
}

// maxContacts bounds the contact list of an account.
const maxContacts = 10

// normalizeContacts validates contact URLs and returns them normalised:
// weir supports mailto: only, with one plain address each (RFC 8555 §7.3,
// §7.3.2). Spaces and tabs around the address are dropped
// ("mailto: name@example.org", as getssl sends it, is
// "mailto:name@example.org"): they cannot be part of an address, so the
// meaning is unambiguous, and only the normalised form is stored.
func normalizeContacts(contacts []string) ([]string, *Problem) {
	if len(contacts) > maxContacts {
		return nil, NewProblem(ProbInvalidContact, "too many contacts: %d, at most %d allowed", len(contacts), maxContacts)
	}
	if len(contacts) == 0 {
		return contacts, nil // nil or empty, as the client sent it
	}
	out := make([]string, len(contacts))
	for i, c := range contacts {
		addr, ok := strings.CutPrefix(strings.Trim(c, " \t"), "mailto:")
		if !ok {
			return nil, NewProblem(ProbUnsupportedContact, "contact %q is not supported: only mailto: URLs are", c)
		}
		addr = strings.Trim(addr, " \t")
		a, err := mail.ParseAddress(addr)
		if err != nil || a.Address != addr || a.Name != "" || strings.ContainsAny(addr, ",?&%") {
			return nil, NewProblem(ProbInvalidContact, "contact %q is not a single plain e-mail address", c)
		}
		domain := addr[strings.LastIndexByte(addr, '@')+1:]
		if _, err := canonicalDNSName(domain); err != nil {
			return nil, NewProblem(ProbInvalidContact, "contact %q has an invalid domain: %v", c, err)
		}
		out[i] = "mailto:" + addr
	}
	return out, nil
}

// NewAccount finds or creates the account of c's key. It reports created
// true for a new account (201) and false for an existing one (200); RFC 8555
// §7.3.1 says an existing key returns its account whether or not
// onlyReturnExisting is set, so an existing account needs no External
// Account Binding. A new one binds the EAB key of req.Binding, once.
func (s *Service) NewAccount(ctx context.Context, c Caller, req NewAccountRequest) (*Account, bool, error) {
	if c.Account != nil || c.Thumbprint == "" {
		return nil, false, Malformed("new-account must be signed with an embedded JWK, not a kid")
	}
	existing, err := s.store.GetAccountByKey(ctx, c.Thumbprint)
	switch {
	case err == nil:
		// Also with onlyReturnExisting: the key is the account's, and it
		// authorizes nothing any more.
		if existing.Status != StatusValid {
			return nil, false, AccountNotValid(existing.ID, existing.Status)
		}
		return existing, false, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, Internal(err)
	}
	if req.OnlyReturnExisting {
		return nil, false, NewProblem(ProbAccountDoesNotExist, "no account exists with this key")
	}
	if s.cfg.TermsOfService != "" && !req.TermsOfServiceAgreed {
		return nil, false, NewProblem(ProbUserActionRequired, "you must agree to the terms of service at %s", s.cfg.TermsOfService)
	}
	contacts, p := normalizeContacts(req.Contact)
	if p != nil {
		return nil, false, p
	}
	eabKeyID, err := s.checkEAB(ctx, req.Binding)
	if err != nil {
		return nil, false, err
	}
	refund, err := s.limits.NewAccount(ctx, c.IP)
	if err != nil {
		return nil, false, err
	}
	a := &Account{
		Key: c.KeyJSON, KeyThumbprint: c.Thumbprint, Contact: contacts,
		Status: StatusValid, CreatedAt: s.now().UTC(), EABKeyID: eabKeyID,
	}
	if c.IP.IsValid() {
		a.CreatedIP = c.IP.String()
	}
	if err := s.store.CreateAccount(ctx, a); err != nil {
		refund()
		if errors.Is(err, ErrEABUnusable) {
			return nil, false, eabBindFailed(eabKeyID, err)
		}
		if errors.Is(err, ErrConflict) {
			// Lost a race with a concurrent new-account for the same key.
			existing, gerr := s.store.GetAccountByKey(ctx, c.Thumbprint)
			if gerr == nil {
				return existing, false, nil
			}
		}
		return nil, false, Internal(err)
	}
	return a, true, nil
}

// AccountUpdate is the payload of a POST to an account URL (RFC 8555 §7.3.2,
// §7.3.6). An empty payload is a POST-as-GET.
type AccountUpdate struct {
	Contact *[]string `json:"contact"`
	Status  Status    `json:"status"`
}

// UpdateAccount changes the contacts of the caller's account, or deactivates
// it. id must be the caller's own account.
func (s *Service) UpdateAccount(ctx context.Context, c Caller, id AccountID, upd *AccountUpdate) (*Account, error) {
	if p := requireAccount(c); p != nil {
		return nil, p
	}
	if c.Account.ID != id {
		return nil, Unauthorized("the request is signed by account %s, not by account %s", c.Account.ID, id)
	}
	if upd == nil {
		return c.Account, nil
	}
	a := *c.Account
	switch upd.Status {
	case "":
	case StatusDeactivated:
		a.Status = StatusDeactivated
	default:
		return nil, Malformed("an account's status can only be changed to %q", StatusDeactivated)
	}
	if upd.Contact != nil {
		contacts, p := normalizeContacts(*upd.Contact)
		if p != nil {
			return nil, p
		}
		a.Contact = contacts
	}
	defer s.forgetAccount(id)
	if err := s.store.UpdateAccount(ctx, &a, StatusValid); err != nil {
		if errors.Is(err, ErrConflict) {
			// Deactivated meanwhile by a concurrent request or an
			// administrator.
			if now, gerr := s.store.GetAccount(ctx, id); gerr == nil && now.Status != StatusValid {
				return nil, AccountNotValid(id, now.Status)
			}
			return nil, Unauthorized("account %s changed concurrently; retry", id)
		}
		return nil, Internal(err)
	}
	return &a, nil
}

// KeyChange replaces the caller's account key with newKey (RFC 8555
// §7.3.5). acme/jws has already checked the inner JWS: it is signed by the
// new key, names this account and the old key.
func (s *Service) KeyChange(ctx context.Context, c Caller, newKeyJSON []byte, newThumbprint Thumbprint) (*Account, error) {
	if p := requireAccount(c); p != nil {
		return nil, p
	}
	if newThumbprint == c.Account.KeyThumbprint {
		return nil, Malformed("the new key is the same as the old key")
	}
	defer s.forgetAccount(c.Account.ID)
	if err := s.store.ChangeAccountKey(ctx, c.Account.ID, c.Account.KeyThumbprint, newThumbprint, newKeyJSON); err != nil {
		if errors.Is(err, ErrConflict) {
			if other, gerr := s.store.GetAccountByKey(ctx, newThumbprint); gerr == nil {
				p := NewProblem(ProbMalformed, "the new key is already in use by account %s", other.ID)
				p.Status = 409
				p.Cause = ErrConflict
				return nil, &KeyInUse{Problem: p, AccountID: other.ID}
			}
			return nil, Unauthorized("the account key changed concurrently; retry")
		}
		return nil, Internal(err)
	}
	a := *c.Account
	a.Key, a.KeyThumbprint = newKeyJSON, newThumbprint
	return &a, nil
}

// KeyInUse is the 409 of key-change when the new key belongs to an account
// (RFC 8555 §7.3.5: the response carries that account's URL in Location).
type KeyInUse struct {
	*Problem
	AccountID AccountID
}

// Unwrap exposes the problem to errors.As.
func (k *KeyInUse) Unwrap() error { return k.Problem }
