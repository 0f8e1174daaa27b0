// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"strings"

	"github.com/weir-pki/weir/acme"
)

// dns-account-01 (draft-ietf-acme-dns-account-label): dns-01 at a name
// scoped to the account, _<label>._acme-challenge.<name>, so that several
// accounts (or several CAs' clients) validate one name at once without
// overwriting each other's records. The record's value is dns-01's, the
// digest of the key authorization. A wildcard authorization is validated
// at its base name, as with dns-01.

// AccountLabel returns the account's label of dns-account-01, without its
// leading underscore: the lower-case base32 (RFC 4648, unpadded: 16
// characters) of the first 10 octets of SHA-256(accountURL).
func AccountLabel(accountURL string) string {
	sum := sha256.Sum256([]byte(accountURL))
	return strings.ToLower(base32.StdEncoding.EncodeToString(sum[:10]))
}

// AccountChallengeName returns the validation domain name of dns-account-01
// for name (a DNS name without "*." or a trailing dot) and an account.
func AccountChallengeName(name, accountURL string) string {
	return "_" + AccountLabel(accountURL) + "._acme-challenge." + name
}

// accountURL is the URL of account id (RFC 8555 §7.3).
func (v *Validator) accountURL(id acme.AccountID) string {
	return v.cfg.AccountURIPrefix + string(id)
}

// validateDNSAccount01 looks up the TXT records of the account's
// validation domain name and succeeds if one of them is the digest of the
// key authorization.
func (v *Validator) validateDNSAccount01(ctx context.Context, t target, req acme.ValidationRequest) *acme.Problem {
	if t.ip.IsValid() {
		return acme.Malformed("dns-account-01 cannot validate an IP address identifier")
	}
	if req.AccountID == "" {
		return acme.Internal(errors.New("challenge: dns-account-01 without an account"))
	}
	return v.checkDigestTXT(ctx, AccountChallengeName(t.name, v.accountURL(req.AccountID)), req.KeyAuthorization)
}
