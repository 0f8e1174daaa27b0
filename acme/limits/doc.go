// SPDX-License-Identifier: Apache-2.0

// Package limits applies weir's rate limits to the ACME use cases: its
// Adapter is the acme.Limits of a server with rate limiting. It sends the
// requests that ratelimit/actions.go gives for each action to a
// ratelimit.Limiter, applies the backend-failure policy (on-backend-error
// within backend-timeout), refunds a spend whose operation failed, turns a
// denial into a rateLimited problem with its extension members and
// per-identifier subproblems, applies the EAB group overrides, and gives
// clients and administrators their quota: the bucket behind the RateLimit
// response fields, the buckets of status, and explain's prediction.
package limits
