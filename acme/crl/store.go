// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"context"
	"time"
)

// Store is what a Maker reads and writes of the store: the revocations'
// count, their counts and lists by scope, and the CRL numbers. Every
// acme.Store implements it (acme.CertificateStore embeds it):
// storage/sqlite and storage/postgres do, and storage/storagetest checks
// each role.
type Store interface {
	RevocationCounter
	ScopedRevocations
	Numberer
}

// Revocation is one revoked certificate as a CRL lists it.
type Revocation struct {
	Serial    string // hex, as acme.Certificate.Serial
	RevokedAt time.Time
	Reason    int    // RFC 5280 reason code
	Issuer    string // the ID of the issuer whose CRL lists it
	Shard     int    // and the shard of its CRLs (acme.Certificate.CRLShard)
}

// Scope is what one CRL covers: the certificates of an issuer whose CRL
// distribution point names one shard of its CRLs.
type Scope struct {
	Issuer string
	Shard  int
}

// RevocationCounter is the role of a Store that says cheaply how many
// certificates it has ever seen revoked. Every replica signs its own
// CRLs; before serving them, a replica compares the count with the one its
// CRLs were made at, and makes new ones when a revocation (by any replica)
// has happened since.
type RevocationCounter interface {
	// RevokedCount returns the number of revoked certificates, expired
	// or not. Revocation is final and certificates are never deleted, so
	// it only grows, by one per revocation, whichever replica revoked, and
	// it does not depend on any replica's clock.
	RevokedCount(ctx context.Context) (int64, error)
}

// ScopedRevocations is the role of a Store that counts and lists the
// revocations of each scope from its index, so that a replica remakes
// only the CRLs whose scope saw a revocation (make.go).
type ScopedRevocations interface {
	// RevokedCounts returns the number of revoked certificates, expired
	// or not, of each scope that has any.
	RevokedCounts(ctx context.Context) (map[Scope]int64, error)
	// ListRevokedScope is acme.CertificateStore.ListRevoked for the
	// certificates of one scope.
	ListRevokedScope(ctx context.Context, scope Scope, now time.Time) ([]Revocation, error)
}

// Numberer is the role of a Store that keeps the numbers of the CRLs, so
// that they grow across the replicas sharing it: each CRL of an issuer
// (and shard) gets a number greater than every number given out before
// for that issuer and shard, by any replica.
type Numberer interface {
	// NextCRLNumber sets, in one atomic step, the CRL number of issuer's
	// shard to the greater of floor and one more than the last, and
	// returns it. The Maker passes its clock in nanoseconds as floor, so
	// that numbers keep growing from those of a weir that numbered CRLs
	// by the clock, and in a store that starts anew (weir
	// migrate-storage does not copy them).
	NextCRLNumber(ctx context.Context, issuer string, shard int, floor int64) (int64, error)
}
