// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strconv"

	"github.com/weir-pki/weir/acme"
)

// KeyAuthorizationDigest returns base64url(SHA-256(keyAuth)) without
// padding: the TXT record value that satisfies a dns-01 challenge (RFC 8555
// §8.4).
func KeyAuthorizationDigest(keyAuth string) string {
	sum := sha256.Sum256([]byte(keyAuth))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validateDNS01 looks up the TXT records of _acme-challenge.<name> and
// succeeds if any of them is the key authorization digest (RFC 8555 §8.4).
// For a wildcard authorization the identifier already is the base name.
func (v *Validator) validateDNS01(ctx context.Context, t target, req acme.ValidationRequest) *acme.Problem {
	if t.ip.IsValid() {
		// RFC 8738 §7: dns-01 MUST NOT be used to validate IP identifiers.
		return acme.Malformed("dns-01 cannot validate an IP address identifier (RFC 8738 §7)")
	}
	return v.checkDigestTXT(ctx, "_acme-challenge."+t.name, req.KeyAuthorization)
}

// checkDigestTXT succeeds if a TXT record at name (not rooted) is the
// digest of keyAuth, and otherwise says what it found there.
func (v *Validator) checkDigestTXT(ctx context.Context, name, keyAuth string) *acme.Problem {
	txts, err := v.resolver.LookupTXT(ctx, name+".") // rooted: no search domains
	if err != nil && !isNotFound(err) {
		return dnsProblem("TXT", name, err)
	}
	if len(txts) == 0 {
		return acme.Unauthorized("No TXT record found at %s", name)
	}
	want := KeyAuthorizationDigest(keyAuth)
	for _, txt := range txts {
		if txt == want {
			return nil
		}
	}
	return acme.Unauthorized("Incorrect TXT record %s%s found at %s", excerpt([]byte(txts[0])), andMore(len(txts)), name)
}

// andMore is " (and N more)" for n records seen, or "" for one.
func andMore(n int) string {
	if n <= 1 {
		return ""
	}
	return " (and " + strconv.Itoa(n-1) + " more)"
}
