package acme

import "context"

// ValidationRequest is one challenge to check against the world.
type ValidationRequest struct {
	Identifier Identifier // for a wildcard authorization, the base name
	Type       ChallengeType
	Token      string
	// KeyAuthorization is token || '.' || base64url(JWK thumbprint)
	// (RFC 8555 §8.1).
	KeyAuthorization string
}

// Validator performs challenge validations (RFC 8555 §8; implemented by
// package acme/challenge).
type Validator interface {
	// Validate returns nil when the challenge is satisfied, else a problem
	// of type connection, dns, incorrectResponse, tls or unauthorized
	// saying precisely what was seen.
	Validate(ctx context.Context, req ValidationRequest) *Problem
}
