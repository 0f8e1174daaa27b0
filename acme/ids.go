// SPDX-License-Identifier: Apache-2.0

package acme

// The identities of the objects, one type each, so that a use case or a
// store method that takes several cannot be given them in the wrong
// order. They are stored and sent as the strings they are.

// AccountID names an account: a decimal integer that the Store assigns
// (AccountStore.CreateAccount), the last segment of its URL and so of
// the kid of its requests (RFC 8555 §7.3).
type AccountID string

// OrderID names an order, chosen by the Service (newID).
type OrderID string

// AuthzID names an authorization, chosen by the Service (newID).
type AuthzID string

// ChallengeID names a challenge, chosen by the Service (newID).
type ChallengeID string

// Thumbprint is the RFC 7638 thumbprint of an account key: base64url of
// the SHA-256 of its canonical JWK. It names the key (AccountStore
// finds an account by it), and a key authorization ends with it
// (RFC 8555 §8.1).
type Thumbprint string
