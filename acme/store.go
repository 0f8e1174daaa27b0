// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"errors"
	"time"

	"github.com/weir-pki/weir/acme/crl"
	"github.com/weir-pki/weir/acme/transparency"
)

// Sentinel errors that Store implementations wrap.
var (
	// ErrNotFound means the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a uniqueness constraint or a compare-and-set
	// precondition failed: the object changed under us.
	ErrConflict = errors.New("conflict")
	// ErrBadCursor means a list cursor is not one the store gave out.
	ErrBadCursor = errors.New("malformed cursor")
	// ErrUnavailable means the store cannot write now (its disk is full,
	// read-only or failing) and wrote nothing: the client is told to retry
	// (503 serverInternal with Retry-After), not that weir broke.
	ErrUnavailable = errors.New("the store cannot write now")
)

// Store is the persistence that Service needs, one interface per role.
// Every method takes ctx. A missing object is an error wrapping
// ErrNotFound. Values come back as fresh copies the caller may mutate.
// Status updates are compare-and-set: they fail with an error wrapping
// ErrConflict unless the stored status still equals from, so two
// concurrent finalize calls can never both issue.
//
// Leases (lease.go) are live while now is before their end; an owner
// names one process (Config.Owner). The times are the callers', so
// replicas' clocks must agree to well within a lease.
type Store interface {
	AccountStore
	OrderStore
	ValidationStore
	FinalizationStore
	CertificateStore
	LeaseStore
	transparency.Store
}

// AccountStore keeps accounts (RFC 8555 §7.3).
type AccountStore interface {
	// CreateAccount stores a new account and sets a.ID (a decimal integer
	// string). ErrConflict if an account with the same KeyThumbprint exists.
	CreateAccount(ctx context.Context, a *Account) error
	GetAccount(ctx context.Context, id AccountID) (*Account, error)
	GetAccountByKey(ctx context.Context, thumbprint Thumbprint) (*Account, error)
	// UpdateAccount writes Contact and Status, compare-and-set on status from.
	UpdateAccount(ctx context.Context, a *Account, from Status) error
	// ChangeAccountKey replaces the key of account id, if it is still the
	// key of old, with newKey, whose thumbprint is new. ErrConflict if new
	// belongs to any account or the old key no longer matches.
	ChangeAccountKey(ctx context.Context, id AccountID, old, new Thumbprint, newKey []byte) error
}

// OrderStore keeps orders and their authorizations (RFC 8555 §7.4, §7.5).
type OrderStore interface {
	// CreateOrder stores o and newAuthzs (with their challenges) in one
	// transaction. o.AuthzIDs may also name existing authorizations being
	// reused. Sets nothing on o: IDs are chosen by the caller.
	CreateOrder(ctx context.Context, o *Order, newAuthzs []*Authorization) error
	GetOrder(ctx context.Context, id OrderID) (*Order, error)
	// ListOrders returns up to limit order IDs of the account, oldest first,
	// starting after cursor ("" = from the start), and the cursor of the next
	// page ("" when there is none). A cursor it did not give out is an
	// error wrapping ErrBadCursor.
	ListOrders(ctx context.Context, accountID AccountID, cursor string, limit int) (ids []OrderID, next string, err error)
	// UpdateOrder writes Status, Error and CertSerial, compare-and-set on
	// from, and frees the order's finalization lease.
	UpdateOrder(ctx context.Context, o *Order, from Status) error
	// ReplacingOrder returns the valid order whose Replaces is certID (an
	// ARI identifier): the renewal that replaced that certificate (RFC 9773
	// §5). ErrNotFound if none. At most one order replacing a certificate
	// can be valid: FinalizeOrder of a second fails with ErrConflict.
	ReplacingOrder(ctx context.Context, certID string) (*Order, error)

	// GetAuthz returns an authorization with its challenges.
	GetAuthz(ctx context.Context, id AuthzID) (*Authorization, error)
	// GetAuthzs returns the authorizations ids name, with their
	// challenges, in the order of ids, in one round trip: an order's, read
	// to derive its status. ErrNotFound if one of them does not exist.
	GetAuthzs(ctx context.Context, ids []AuthzID) ([]*Authorization, error)
	// FindValidAuthz returns an authorization of the account for the
	// identifier (and wildcard flag) that is valid and expires after
	// notBefore, the latest-expiring one if several. ErrNotFound if none.
	FindValidAuthz(ctx context.Context, accountID AccountID, ident Identifier, wildcard bool, notBefore time.Time) (*Authorization, error)
	// UpdateAuthz writes the authorization's Status and Expires and the
	// Status, Error, Validated and UpdatedAt of each challenge in
	// a.Challenges (which may list only those that changed), in one
	// transaction, compare-and-set on the authorization's status from.
	UpdateAuthz(ctx context.Context, a *Authorization, from Status) error
}

// ValidationStore keeps challenges and leases their validation jobs
// (lease.go, RFC 8555 §7.5.1).
type ValidationStore interface {
	// GetChallenge returns one challenge (with AuthzID set). Its outcome
	// is written with its authorization's (OrderStore.UpdateAuthz).
	GetChallenge(ctx context.Context, id ChallengeID) (*Challenge, error)
	// StartChallenge moves challenge id from pending to processing, with
	// UpdatedAt now, and leases it to owner until now+lease, in one
	// compare-and-set: ErrConflict unless it is pending.
	StartChallenge(ctx context.Context, id ChallengeID, owner string, now time.Time, lease time.Duration) error
	// ClaimChallenges atomically leases to owner, until now+lease, up to
	// limit challenges in processing whose lease is free or ended, and
	// returns them, least recently updated first. Concurrent calls, from
	// any process, never return the same challenge while its lease is
	// live.
	ClaimChallenges(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*Challenge, error)
	// ClaimChallenge leases challenge id to owner until now+lease if it
	// is processing and its lease is free, ended or owner's (a renewal).
	// ErrConflict if it is not processing or another owner's lease is
	// live.
	ClaimChallenge(ctx context.Context, id ChallengeID, owner string, now time.Time, lease time.Duration) error
	// ReleaseChallenge frees owner's lease of challenge id, so that the
	// next claim of any process may take it. Nothing happens if owner
	// does not hold it.
	ReleaseChallenge(ctx context.Context, id ChallengeID, owner string) error
}

// FinalizationStore leases finalizations and stores what they issue
// (lease.go, RFC 8555 §7.4).
type FinalizationStore interface {
	// StartFinalize moves order id from pending to processing, stores csr
	// (DER) as its CSR and leases the finalization to owner until
	// now+lease, in one compare-and-set: ErrConflict unless it is pending.
	StartFinalize(ctx context.Context, id OrderID, owner string, csr []byte, now time.Time, lease time.Duration) error
	// ClaimOrders atomically leases to owner, until now+lease, up to
	// limit orders in processing whose lease is free or ended, and
	// returns them (with their CSR), oldest first. Concurrent calls, from
	// any process, never return the same order while its lease is live.
	ClaimOrders(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*Order, error)
	// FinalizeOrder stores cert and moves order cert.OrderID from processing
	// to valid with CertSerial = cert.Serial, and frees its lease, in one
	// transaction; the certificate is durable before this returns.
	// ErrConflict if the order is not processing.
	FinalizeOrder(ctx context.Context, cert *Certificate) error
}

// CertificateStore keeps issued certificates, their revocations (the
// CRLs: counted, listed by scope and numbered, crl.Store) and their
// renewal windows (incident.go).
type CertificateStore interface {
	crl.Store
	GetCertificate(ctx context.Context, serial string) (*Certificate, error)
	// RevokeCertificate marks a certificate revoked. ErrConflict if it
	// already is. A window that ends after at is recorded as a
	// renewal.Removal at at, and logEntry (unless nil) as a pending entry
	// of the verifiable log (transparency.Store), in the same transaction.
	RevokeCertificate(ctx context.Context, serial string, reason int, at time.Time, logEntry []byte) error
	// ListRevoked returns the revocations of the certificates that have
	// not yet expired at now (what a CRL must list), read from an index
	// that covers them, never the certificates' rows.
	ListRevoked(ctx context.Context, now time.Time) ([]Revocation, error)
	// SetRenewalWindows moves the ARI windows of the given certificates
	// and marks them RenewNow (incident mode: a window in the past tells
	// clients to renew now), at at: each unrevoked window moved that
	// ended after at is recorded as a renewal.Removal, in the same
	// transaction.
	SetRenewalWindows(ctx context.Context, serials []string, start, end, at time.Time) error
}

// LeaseStore keeps named leases: background work that one process at a
// time should do (Service.RunLeased).
type LeaseStore interface {
	// TryLease takes or renews the lease called name for owner until
	// now+ttl if it is free, ended or owner's already, and reports
	// whether owner holds it.
	TryLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
	// ReleaseLease ends the lease called name if owner holds it.
	ReleaseLease(ctx context.Context, name, owner string) error
}

// NonceStore issues and redeems anti-replay nonces (RFC 8555 §7.2).
type NonceStore interface {
	// Nonce returns a fresh nonce.
	Nonce(ctx context.Context) (string, error)
	// Redeem consumes n. It reports false when n is unknown, expired or
	// already used; each nonce redeems true at most once.
	Redeem(ctx context.Context, n string) (bool, error)
}

// Revocation is one revoked certificate as a CRL lists it (acme/crl).
type Revocation = crl.Revocation

// CRLScope is what one CRL covers (acme/crl): an issuer and a shard.
type CRLScope = crl.Scope

// DefaultIssuer is the ID of the issuer of ca.intermediate, the one
// issuer of a configuration without ca.issuers, and the issuer of every
// certificate stored before certificates named theirs.
const DefaultIssuer = "default"

// CRLShardLister is implemented by a Store that can say cheaply which
// CRL shards the unexpired certificates of an issuer name, so that weir
// keeps making and serving the CRL of each (a certificate's distribution
// point is fixed at issuance, whatever ca.crl-shards says later).
// storage/sqlite and storage/postgres implement it from an index on
// (issuer, crl_shard, not_after); storage/storagetest checks it.
type CRLShardLister interface {
	// CRLShardsInUse returns, in increasing order, the shards
	// (Certificate.CRLShard, 0 for the issuer's one CRL) named by the
	// certificates of issuer not expired at now, revoked or not.
	CRLShardsInUse(ctx context.Context, issuer string, now time.Time) ([]int, error)
}
