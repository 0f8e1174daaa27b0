// SPDX-License-Identifier: Apache-2.0

// Package transfer is the backend-neutral form of weir's ACME state, for
// moving it from one store to another (weir migrate-storage): one record
// type per table, holding every column in its stored form, the order in
// which the tables are copied, and the Sink that an importer implements.
//
// The stored form is the one both SQL schemas share (migrations/sqlite and
// migrations/postgres): times are Unix nanoseconds in UTC, 0 for the zero
// time and nil for a NULL; JSON columns are the text as stored, byte for
// byte; account IDs and order sequence numbers are the integers the source
// assigned. A copy through these records changes nothing, not even the
// encoding of a problem document, so that a certificate's ARI identifier,
// an account's URL and an order's position in its account's list are the
// same before and after a move.
//
// What is not ACME state is not here: anti-replay nonces (they live
// minutes, and clients retry a refused one), the rate limiter's buckets
// (their own database or Redis), and the leases that running replicas
// hold on validation jobs and background work (none is held while weir is
// stopped for the copy).
package transfer

import (
	"context"
	"fmt"
	"strings"
)

// Table names a table of ACME state.
type Table string

// The tables of ACME state.
const (
	AdminCreds   Table = "admin_credentials"
	Tenants      Table = "tenants"
	Accounts     Table = "accounts"
	EABKeys      Table = "eab_keys"
	Authzs       Table = "authzs"
	Challenges   Table = "challenges"
	Orders       Table = "orders"
	Certificates Table = "certificates"
	// The verifiable log (log.go).
	LogEntries     Table = "log_entries"
	LogHashes      Table = "log_hashes"
	LogCheckpoints Table = "log_checkpoints"
)

// Tables returns every table in the order in which they are copied: each
// row refers only to rows of tables earlier in the order (the
// administrators' credentials, first, to none; an EAB key to
// the account it is bound to and to its tenant, a challenge to its authorization, an order
// to its account, a certificate to its order), then the verifiable log,
// whose issuance entries name their certificates.
func Tables() []Table {
	return []Table{AdminCreds, Tenants, Accounts, EABKeys, Authzs, Challenges, Orders, Certificates,
		LogEntries, LogHashes, LogCheckpoints}
}

// Counts is the number of rows of each table.
type Counts map[Table]int64

// Summary is what an export read, in one consistent snapshot.
type Summary struct {
	// Counts is the number of rows of each table.
	Counts Counts
	// AccountSeq is the highest account ID the source ever assigned, and
	// OrderSeq the highest order sequence number: at least the greatest
	// in use, and greater when the last ones were rolled back. The target
	// assigns greater ones, so that no ID is ever used twice.
	AccountSeq int64
	OrderSeq   int64
	// LogSize is the verifiable log's size: its integrated entries, the
	// size of its latest checkpoint.
	LogSize int64
	// LogServedSize is the size of the checkpoint the log serves, once
	// witnesses cosigned it (0 while none was served): at most LogSize.
	LogServedSize int64
}

// Sink receives the rows of an export, table by table in the order of
// Tables, in batches; a batch is one transaction of the target. A method
// that returns an error ends the export with it.
type Sink interface {
	AdminCredentials(ctx context.Context, rows []AdminCredential) error
	Tenants(ctx context.Context, rows []Tenant) error
	Accounts(ctx context.Context, rows []Account) error
	EABKeys(ctx context.Context, rows []EABKey) error
	Authzs(ctx context.Context, rows []Authz) error
	Challenges(ctx context.Context, rows []Challenge) error
	Orders(ctx context.Context, rows []Order) error
	Certificates(ctx context.Context, rows []Certificate) error
	LogEntries(ctx context.Context, rows []LogEntry) error
	LogHashes(ctx context.Context, rows []LogHash) error
	LogCheckpoints(ctx context.Context, rows []LogCheckpoint) error
}

// Account is a row of accounts.
type Account struct {
	ID            int64
	KeyThumbprint string
	JWK           []byte // the public JWK, JSON; nil is NULL
	Contact       string // JSON array of URLs
	Status        string
	CreatedAt     int64
	CreatedIP     string
	EABKeyID      string // "" without External Account Binding
}

// AdminCredential is a row of admin_credentials: the administrators'
// named credentials, which the operator's access needs on the new store.
type AdminCredential struct {
	Name      string
	Role      string
	SHA256    string // the token's SHA-256, hex
	CreatedAt int64
	CreatedBy string
	// NameLower is the name in lower case, unique; nil (NULL) for a name
	// an older credential's equals but for case, kept from before names
	// were compared so (the admin listener leaves it out).
	NameLower *string
}

// Tenant is a row of tenants.
type Tenant struct {
	Name      string
	Policy    string // JSON, as the store keeps it
	CreatedAt int64
	UpdatedAt int64
}

// EABKey is a row of eab_keys.
type EABKey struct {
	ID           string
	Label        string
	Tenant       string // "" for the default tenant
	HMACKey      []byte
	CreatedAt    int64
	BoundAccount *int64 // nil until bound
	BoundAt      *int64 // nil until bound
	RevokedAt    *int64 // nil unless revoked
}

// Authz is a row of authzs.
type Authz struct {
	ID         string
	AccountID  int64
	IdentType  string
	IdentValue string
	Wildcard   bool
	Status     string
	Expires    int64
	CreatedAt  int64
}

// Challenge is a row of challenges.
type Challenge struct {
	ID        string
	AuthzID   string
	Position  int64 // its place among its authorization's challenges
	Type      string
	Token     string
	Status    string
	Validated int64
	Error     *string // JSON problem document; nil is NULL
	UpdatedAt int64
}

// Order is a row of orders.
type Order struct {
	Seq         int64 // the order's position in creation order
	ID          string
	AccountID   int64
	Status      string
	Identifiers string // JSON array of {type, value}
	AuthzIDs    string // JSON array of authorization IDs
	NotBefore   int64
	NotAfter    int64
	Expires     int64
	Error       *string // JSON problem document; nil is NULL
	CertSerial  string
	CreatedAt   int64
	Replaces    string // the ARI identifier of the certificate it replaces
	Profile     string
	CSR         []byte // the CSR it was finalized with; nil is NULL
}

// Certificate is a row of certificates.
type Certificate struct {
	Serial       string
	AccountID    int64
	OrderID      string
	DER          []byte // nil is NULL
	ChainPEM     []byte // nil is NULL
	Names        string // JSON array of identifier values
	NameSet      string // the same values joined by ","
	NotBefore    int64
	NotAfter     int64
	IssuedAt     int64
	RevokedAt    *int64 // nil unless revoked
	Reason       int64
	Profile      string
	RenewalStart int64
	RenewalEnd   int64
	RenewNow     bool
	Issuer       string // the ID of its issuer (acme.DefaultIssuer for rows before it was kept)
	CRLShard     int64  // the shard of its issuer's CRLs
	// Validations is how each name was validated, the JSON array as
	// stored; nil is NULL (a certificate issued before they were
	// recorded).
	Validations *string
}

// CheckLog returns an error if the log's sizes of s do not fit together:
// the served size must be between 0 and the log's size.
func (s Summary) CheckLog() error {
	if s.LogServedSize < 0 || s.LogServedSize > s.LogSize {
		return fmt.Errorf("the log's served size %d is not between 0 and its size %d", s.LogServedSize, s.LogSize)
	}
	return nil
}

// Compare returns an error naming every table whose count in got differs
// from want, or nil if none does.
func Compare(want, got Counts) error {
	var diffs []string
	for _, t := range Tables() {
		if want[t] != got[t] {
			diffs = append(diffs, fmt.Sprintf("%s: %d rows, want %d", t, got[t], want[t]))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("transfer: row counts differ: %s", strings.Join(diffs, "; "))
}
