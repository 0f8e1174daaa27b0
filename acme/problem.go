// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ProblemType is an ACME error type URN (RFC 8555 §6.7).
type ProblemType string

// The problem types of RFC 8555 §6.7 and its extensions that weir uses.
const (
	ProbAccountDoesNotExist     ProblemType = "urn:ietf:params:acme:error:accountDoesNotExist"
	ProbAlreadyRevoked          ProblemType = "urn:ietf:params:acme:error:alreadyRevoked"
	ProbBadCSR                  ProblemType = "urn:ietf:params:acme:error:badCSR"
	ProbBadNonce                ProblemType = "urn:ietf:params:acme:error:badNonce"
	ProbBadPublicKey            ProblemType = "urn:ietf:params:acme:error:badPublicKey"
	ProbBadRevocationReason     ProblemType = "urn:ietf:params:acme:error:badRevocationReason"
	ProbBadSignatureAlgorithm   ProblemType = "urn:ietf:params:acme:error:badSignatureAlgorithm"
	ProbCAA                     ProblemType = "urn:ietf:params:acme:error:caa"
	ProbConnection              ProblemType = "urn:ietf:params:acme:error:connection"
	ProbDNS                     ProblemType = "urn:ietf:params:acme:error:dns"
	ProbExternalAccountRequired ProblemType = "urn:ietf:params:acme:error:externalAccountRequired"
	ProbIncorrectResponse       ProblemType = "urn:ietf:params:acme:error:incorrectResponse"
	ProbInvalidContact          ProblemType = "urn:ietf:params:acme:error:invalidContact"
	ProbMalformed               ProblemType = "urn:ietf:params:acme:error:malformed"
	ProbOrderNotReady           ProblemType = "urn:ietf:params:acme:error:orderNotReady"
	ProbRateLimited             ProblemType = "urn:ietf:params:acme:error:rateLimited"
	ProbRejectedIdentifier      ProblemType = "urn:ietf:params:acme:error:rejectedIdentifier"
	ProbServerInternal          ProblemType = "urn:ietf:params:acme:error:serverInternal"
	ProbTLS                     ProblemType = "urn:ietf:params:acme:error:tls"
	ProbUnauthorized            ProblemType = "urn:ietf:params:acme:error:unauthorized"
	ProbUnsupportedContact      ProblemType = "urn:ietf:params:acme:error:unsupportedContact"
	ProbUnsupportedIdentifier   ProblemType = "urn:ietf:params:acme:error:unsupportedIdentifier"
	ProbUserActionRequired      ProblemType = "urn:ietf:params:acme:error:userActionRequired"
	ProbAlreadyReplaced         ProblemType = "urn:ietf:params:acme:error:alreadyReplaced"
	// ProbInvalidProfile: the order asks for a profile the server does not
	// offer (draft-aaron-acme-profiles §5); status 400.
	ProbInvalidProfile ProblemType = "urn:ietf:params:acme:error:invalidProfile"
)

// Problem is an RFC 7807 problem document as ACME uses it (RFC 8555 §6.7).
// It is also an error. Cause is logged, never sent to the client.
type Problem struct {
	Type        ProblemType `json:"type"`
	Detail      string      `json:"detail,omitempty"`
	Status      int         `json:"status,omitempty"`
	Identifier  *Identifier `json:"identifier,omitempty"`
	Subproblems []*Problem  `json:"subproblems,omitempty"`
	// Algorithms lists the acceptable JWS algorithms on a
	// badSignatureAlgorithm problem (RFC 8555 §6.2).
	Algorithms []string `json:"algorithms,omitempty"`
	// RateLimitInfo, on a rateLimited problem, adds the members naming
	// the bucket that refused (docs/rate-limits.md); its fields are
	// top-level members of the document.
	*RateLimitInfo

	// RetryAfter, when positive, is sent as a Retry-After header.
	RetryAfter time.Duration `json:"-"`
	// HelpURL, when set, is sent as a Link rel="help" header.
	HelpURL string `json:"-"`
	// Cause is the internal error behind the problem; logged, never sent.
	Cause error `json:"-"`
}

// RateLimitInfo is the extension members of a rateLimited problem
// (RFC 7807 §3.2): which bucket refused, what is left in it, the window
// of its limit and when it frees up.
type RateLimitInfo struct {
	// Limit and Key name the bucket ("order-creation", "12").
	Limit string `json:"limit"`
	Key   string `json:"key"`
	// Remaining is the tokens or member slots left in it.
	Remaining int64 `json:"remaining"`
	// Quota per Window seconds is the limit as the RateLimit-Policy field
	// says it (q, w): a rate limit's burst per the time an empty bucket
	// takes to refill; an exact count's maximum per its window (Window
	// absent when it has none: pending-authorizations).
	Quota  int64 `json:"quota"`
	Window int64 `json:"window,omitempty"`
	// Count per Period seconds is a rate limit's configured rate (20 per
	// 3600 for "20 per hour"); absent for an exact count.
	Count  int64 `json:"count,omitempty"`
	Period int64 `json:"period,omitempty"`
	// FreesAt is when the request would be allowed (Retry-After from the
	// response, rounded up to the second); absent when no wait helps.
	FreesAt time.Time `json:"freesAt,omitzero"`
}

// Error implements error.
func (p *Problem) Error() string {
	s := string(p.Type) + ": " + p.Detail
	if p.Cause != nil {
		s += " (" + p.Cause.Error() + ")"
	}
	return s
}

// Unwrap returns the internal cause.
func (p *Problem) Unwrap() error { return p.Cause }

// statusFor gives the HTTP status RFC 8555 and common practice use per type.
func statusFor(t ProblemType) int {
	switch t {
	case ProbServerInternal:
		return http.StatusInternalServerError
	case ProbUnauthorized, ProbExternalAccountRequired, ProbUserActionRequired, ProbOrderNotReady:
		return http.StatusForbidden
	case ProbRateLimited:
		return http.StatusTooManyRequests
	case ProbAlreadyReplaced:
		return http.StatusConflict
	default:
		return http.StatusBadRequest
	}
}

// NewProblem makes a problem of type t with a formatted detail and the
// conventional HTTP status for t.
func NewProblem(t ProblemType, format string, args ...any) *Problem {
	return &Problem{Type: t, Detail: fmt.Sprintf(format, args...), Status: statusFor(t)}
}

// Malformed is a malformed-request problem.
func Malformed(format string, args ...any) *Problem {
	return NewProblem(ProbMalformed, format, args...)
}

// Unauthorized is an unauthorized problem (403).
func Unauthorized(format string, args ...any) *Problem {
	return NewProblem(ProbUnauthorized, format, args...)
}

// NotFound is a malformed problem with status 404, for an unknown resource.
func NotFound(format string, args ...any) *Problem {
	p := NewProblem(ProbMalformed, format, args...)
	p.Status = http.StatusNotFound
	return p
}

// Internal wraps an unexpected error: the client sees a generic detail, the
// log sees cause. A store that cannot write (ErrUnavailable) is a 503 with
// Retry-After instead of a 500: the request may succeed once the operator
// frees the disk.
func Internal(cause error) *Problem {
	if errors.Is(cause, ErrUnavailable) {
		return &Problem{Type: ProbServerInternal, Detail: "the server cannot store anything now; retry shortly",
			Status: http.StatusServiceUnavailable, RetryAfter: UnavailableRetryAfter, Cause: cause}
	}
	return &Problem{Type: ProbServerInternal, Detail: "internal server error", Status: http.StatusInternalServerError, Cause: cause}
}

// UnavailableRetryAfter is the Retry-After of a request refused because
// the store or the limiter cannot write (ErrUnavailable).
const UnavailableRetryAfter = 5 * time.Second

// RateLimited is a rateLimited problem (429) with the time after which the
// request may be retried.
func RateLimited(retryAfter time.Duration, helpURL, format string, args ...any) *Problem {
	p := NewProblem(ProbRateLimited, format, args...)
	p.RetryAfter = retryAfter
	p.HelpURL = helpURL
	return p
}

// AsProblem returns err as a *Problem, wrapping anything else as Internal.
func AsProblem(err error) *Problem {
	if err == nil {
		return nil
	}
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	return Internal(err)
}

// WithIdentifier returns a copy of p about ident.
func (p *Problem) WithIdentifier(ident Identifier) *Problem {
	q := *p
	q.Identifier = &ident
	return &q
}

// combine returns nil for no problems, the single problem for one, and for
// several a problem of type t whose subproblems are the individual ones
// (RFC 8555 §6.7.1).
func combine(t ProblemType, detail string, probs []*Problem) *Problem {
	switch len(probs) {
	case 0:
		return nil
	case 1:
		return probs[0]
	}
	p := NewProblem(t, "%s", detail)
	p.Subproblems = probs
	return p
}
