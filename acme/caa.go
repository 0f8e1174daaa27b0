// SPDX-License-Identifier: Apache-2.0

package acme

import "context"

// CAARequest is one CAA check (RFC 8659): may this CA issue for the
// identifier, to this account, validated by this method?
type CAARequest struct {
	// Identifier is the authorization's identifier: for a wildcard, the
	// base name without "*.".
	Identifier Identifier
	// Wildcard selects the issuewild property (RFC 8659 §4.3).
	Wildcard bool
	// AccountID is the applicant's account, for the accounturi parameter
	// (RFC 8657 §3).
	AccountID AccountID
	// Method is the challenge type that validated the identifier, for the
	// validationmethods parameter (RFC 8657 §4).
	Method ChallengeType
}

// CAAChecker is a Validator that also checks CAA. When the Service's
// Validator implements it, every challenge that passes is followed by a
// CAA check of its identifier (RFC 8555 §10.3 leaves CAA to the CA; the
// CA/Browser Forum wants it checked before issuance, and like Let's
// Encrypt's Boulder weir checks it when validation succeeds): a refusal
// makes the challenge and its authorization invalid with a caa problem.
type CAAChecker interface {
	// CheckCAA returns nil when CAA allows issuance for req, else a caa
	// problem saying which record (or which DNS failure) forbids it.
	CheckCAA(ctx context.Context, req CAARequest) *Problem
}
