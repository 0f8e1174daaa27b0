// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme/renewal"
)

// Inventory is the read side that administrators need and ACME clients do
// not: listing, searching and counting what the CA holds. Every backend
// that implements Store implements it too (storage/storagetest checks
// both). Lists are newest first and paged by an opaque cursor; a next
// cursor of "" means the last page, and a cursor the store did not give
// out is an error wrapping ErrBadCursor.
type Inventory interface {
	// ListAccounts returns the accounts matching q.
	ListAccounts(ctx context.Context, q AccountQuery) (accts []*Account, next string, err error)
	// ListCertificates returns the certificates matching q.
	ListCertificates(ctx context.Context, q CertQuery) (certs []*Certificate, next string, err error)
	// ListAllOrders returns the orders matching q, of every account.
	ListAllOrders(ctx context.Context, q OrderQuery) (orders []*Order, next string, err error)
	// Counts counts accounts, orders and certificates at now.
	Counts(ctx context.Context, now time.Time) (Counts, error)
	// Issuance counts the certificates issued in each step-long interval
	// of [from, from+n*step): element i counts issued_at in
	// [from+i*step, from+(i+1)*step).
	Issuance(ctx context.Context, from time.Time, step time.Duration, n int) ([]int, error)
	// RecentNames returns what an account asked for since a time, so that
	// its limiter buckets can be found: the names of its authorizations
	// created since then (a wildcard authorization as "*.name"), and the
	// name sets of its certificates issued since then. Each list holds
	// distinct values, at most limit of them, newest first.
	RecentNames(ctx context.Context, accountID AccountID, since time.Time, limit int) (names []string, sets [][]string, err error)
	// The windows the renewal planner reads (renewal.Feed).
	renewal.Feed
}

// AccountQuery selects accounts.
type AccountQuery struct {
	// Search matches an account ID exactly when it is one (a decimal
	// number), and otherwise a substring of a contact, the key thumbprint
	// or the creating IP.
	Search string
	// Status keeps only accounts in this status; "" keeps all.
	Status Status
	Cursor string
	// Limit is the page size (default 50, at most 500).
	Limit int
}

// CertState selects certificates by lifecycle.
type CertState string

// The certificate states of CertQuery.
const (
	CertAny     CertState = ""
	CertActive  CertState = "active"  // not revoked and not expired
	CertRevoked CertState = "revoked" // revoked
	CertExpired CertState = "expired" // expired and not revoked
)

// CertQuery selects certificates.
type CertQuery struct {
	// AccountID keeps one account's certificates; "" keeps all.
	AccountID AccountID
	// Search matches a serial prefix (hex) or a substring of a name.
	Search string
	// State keeps certificates in one state at Now.
	State CertState
	// Now is the time State is judged at.
	Now    time.Time
	Cursor string
	// Limit is the page size (default 50, at most 500).
	Limit int
}

// OrderQuery selects orders.
type OrderQuery struct {
	// AccountID keeps one account's orders; "" keeps all.
	AccountID AccountID
	// Status keeps orders whose stored status is this; "" keeps all.
	Status Status
	Cursor string
	// Limit is the page size (default 50, at most 500).
	Limit int
}

// PageLimit applies the default (50) and the cap (500) of a query limit.
func PageLimit(n int) int {
	switch {
	case n <= 0:
		return 50
	case n > 500:
		return 500
	}
	return n
}

// Counts is a summary of what the CA holds.
type Counts struct {
	// Accounts counts accounts by status.
	Accounts map[Status]int `json:"accounts"`
	// Orders counts orders by stored status (pending, processing, valid,
	// invalid).
	Orders map[Status]int `json:"orders"`
	// Certificates counts certificates by CertState (active, revoked,
	// expired).
	Certificates map[CertState]int `json:"certificates"`
}
