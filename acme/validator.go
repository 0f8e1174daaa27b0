// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"time"
)

// ValidationRequest is one challenge to check against the world.
type ValidationRequest struct {
	Identifier Identifier // for a wildcard authorization, the base name
	// Wildcard is the authorization's: dns-persist-01 then requires the
	// record's policy=wildcard.
	Wildcard bool
	Type     ChallengeType
	Token    string
	// KeyAuthorization is token || '.' || base64url(JWK thumbprint)
	// (RFC 8555 §8.1).
	KeyAuthorization string
	// AccountID is the applicant's account: dns-account-01 and
	// dns-persist-01 name its URL.
	AccountID AccountID
	// Thumbprint is the account key's JWK thumbprint (RFC 7638), which
	// dns-persist-01's hashed account URI covers.
	Thumbprint Thumbprint
}

// Validator performs challenge validations (RFC 8555 §8; implemented by
// package acme/challenge).
type Validator interface {
	// Validate returns nil when the challenge is satisfied, else a problem
	// of type connection, dns, incorrectResponse, tls or unauthorized
	// saying precisely what was seen.
	Validate(ctx context.Context, req ValidationRequest) *Problem
}

// BoundedValidator is a Validator whose success may come with a time
// after which it must not be relied on: a dns-persist-01 record's
// persistUntil (draft-ietf-acme-dns-persist-02 §4.1), which caps the
// authorization's expiry. A zero time sets no bound.
type BoundedValidator interface {
	ValidateUntil(ctx context.Context, req ValidationRequest) (time.Time, *Problem)
}
