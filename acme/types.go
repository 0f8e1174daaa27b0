// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"time"
)

// Status is the status of an ACME object (RFC 8555 §7.1.6).
type Status string

// The statuses of RFC 8555 §7.1.6.
const (
	StatusPending     Status = "pending"
	StatusReady       Status = "ready"
	StatusProcessing  Status = "processing"
	StatusValid       Status = "valid"
	StatusInvalid     Status = "invalid"
	StatusDeactivated Status = "deactivated"
	StatusExpired     Status = "expired"
	StatusRevoked     Status = "revoked"
)

// IdentifierType is the type of an identifier (RFC 8555 §9.7.7, RFC 8738).
type IdentifierType string

// The identifier types weir issues for.
const (
	IdentifierDNS IdentifierType = "dns"
	IdentifierIP  IdentifierType = "ip"
)

// Identifier is an ACME identifier object.
type Identifier struct {
	Type  IdentifierType `json:"type"`
	Value string         `json:"value"`
}

// ChallengeType is the type of a challenge (RFC 8555 §8, RFC 8737).
type ChallengeType string

// The challenge types weir validates.
const (
	ChallengeHTTP01    ChallengeType = "http-01"
	ChallengeDNS01     ChallengeType = "dns-01"
	ChallengeTLSALPN01 ChallengeType = "tls-alpn-01"
	// ChallengeDNSAccount01 is dns-01 at an account-scoped name
	// (draft-ietf-acme-dns-account-label).
	ChallengeDNSAccount01 ChallengeType = "dns-account-01"
	// ChallengeDNSPersist01 is a persistent TXT record naming the CA and
	// the account (draft-ietf-acme-dns-persist-02).
	ChallengeDNSPersist01 ChallengeType = "dns-persist-01"
)

// AllChallengeTypes returns every challenge type weir implements, in the
// order an authorization lists them.
func AllChallengeTypes() []ChallengeType {
	return []ChallengeType{ChallengeHTTP01, ChallengeDNS01, ChallengeTLSALPN01, ChallengeDNSAccount01, ChallengeDNSPersist01}
}

// IsDNS reports whether t proves control through a DNS record of the
// name: the only kind that may validate a wildcard (RFC 8555 §7.1.3) and
// the kind that cannot validate an IP address (RFC 8738 §7).
func (t ChallengeType) IsDNS() bool {
	return t == ChallengeDNS01 || t == ChallengeDNSAccount01 || t == ChallengeDNSPersist01
}

// Account is an ACME account (RFC 8555 §7.1.2). ID is assigned by the Store.
type Account struct {
	ID            AccountID
	Key           []byte     // the account's public JWK, JSON-encoded
	KeyThumbprint Thumbprint // of Key
	Contact       []string
	Status        Status
	CreatedAt     time.Time
	CreatedIP     string
	// EABKeyID is the External Account Binding key the account was
	// created with (RFC 8555 §7.3.4); "" without one.
	EABKeyID string
}

// Order is an ACME order (RFC 8555 §7.1.3). Its stored Status is pending,
// processing, valid or invalid; "ready" and expiry-driven "invalid" are
// derived from its authorizations by Service.
type Order struct {
	ID          OrderID
	AccountID   AccountID
	Status      Status
	Identifiers []Identifier
	AuthzIDs    []AuthzID
	NotBefore   time.Time // zero when not requested
	NotAfter    time.Time // zero when not requested
	Expires     time.Time
	Error       *Problem
	CertSerial  string // hex serial of the issued certificate once valid
	CreatedAt   time.Time
	Replaces    string // ARI certID this order replaces (RFC 9773), if any
	// Urgent is set by NewOrder, not stored: the certificate Replaces names
	// is in an incident (acme/incident.go), so the limits reserve capacity.
	Urgent  bool
	Profile string // the certificate profile asked for; "" is the default
	// CSR is the DER of the CSR the order was finalized with, stored when
	// it moves to processing, so that any replica can complete a
	// finalization whose replica stopped (acme/lease.go).
	CSR []byte
}

// Authorization is an ACME authorization (RFC 8555 §7.1.4).
type Authorization struct {
	ID         AuthzID
	AccountID  AccountID
	Identifier Identifier // for a wildcard, the base name without "*."
	Wildcard   bool
	Status     Status
	Expires    time.Time
	Challenges []*Challenge
	CreatedAt  time.Time
}

// Name is what the authorization is for as an order names it: the
// identifier's value, with a leading "*." for a wildcard (RFC 8555
// §7.1.3).
func (a *Authorization) Name() string {
	if a.Wildcard {
		return "*." + a.Identifier.Value
	}
	return a.Identifier.Value
}

// Challenge is an ACME challenge (RFC 8555 §7.1.5, §8).
type Challenge struct {
	ID        ChallengeID
	AuthzID   AuthzID
	Type      ChallengeType
	Token     string
	Status    Status
	Validated time.Time // zero until valid
	Error     *Problem
	UpdatedAt time.Time
}

// Certificate is an issued certificate and what is needed to serve, revoke
// and count it. Nothing issued is ever deleted.
type Certificate struct {
	Serial           string // lowercase hex, the key of the certificate resource
	AccountID        AccountID
	OrderID          OrderID
	DER              []byte   // the leaf
	ChainPEM         []byte   // leaf then issuer chain, as served to the client
	Names            []string // canonical, sorted identifier values (the "FQDN set")
	NotBefore        time.Time
	NotAfter         time.Time
	IssuedAt         time.Time
	RevokedAt        time.Time // zero unless revoked
	RevocationReason int       // RFC 5280 reason code, meaningful when revoked
	Profile          string    // the profile it was issued under
	// RenewalStart and RenewalEnd are the ARI suggested window (RFC 9773
	// §4.2), set at issuance; zero means the default window.
	RenewalStart time.Time
	RenewalEnd   time.Time
	// RenewNow marks a certificate in an incident: its window was moved
	// into the past and its replacement is exempt from account limits.
	RenewNow bool
	// Issuer is the ID of the issuer that signed it (ca.issuers); ""
	// is stored as DefaultIssuer.
	Issuer string
	// CRLShard is the shard of its issuer's CRLs that lists it once
	// revoked, the one its CRL distribution point names (ca.crl-shards);
	// 0 is the issuer's one CRL.
	CRLShard int
	// Validations are how each of its names was validated, in the order
	// of Names, stored with it at issuance; nil for a certificate issued
	// before they were recorded, whose validations are unknown.
	Validations []NameValidation
	// LogEntry is the verifiable log's entry of its issuance
	// (transparency.Entry), which FinalizeOrder writes in the same
	// transaction (transparency.Store); nil when the log is off. It is not part of
	// the certificate's row: reads return nil.
	LogEntry []byte
}

// NameValidation is how one name of a certificate was validated, as its
// issuance records it: the Baseline Requirements ask a CA to record, for
// each name, the method it was validated by (CA/Browser Forum Baseline
// Requirements §3.2.2.4, §5.4.1). Its JSON is the form the stores keep
// (a column of the certificate's row), the audit record's and the admin
// API's.
type NameValidation struct {
	// Name is the identifier as the certificate names it ("*." kept).
	Name string `json:"name"`
	// Method is the challenge type that made its authorization valid
	// ("http-01"), or ValidationDelegated and the tenant's zone
	// ("delegated-zone:.a.example") for one valid with no challenge; ""
	// when it cannot be told.
	Method string `json:"method"`
	// AuthzID is the authorization that validated it.
	AuthzID AuthzID `json:"authorization"`
	// ValidatedAt is when it became valid: the challenge's validation, or
	// the creation of a delegated zone's authorization.
	ValidatedAt time.Time `json:"validated_at,omitzero"`
	// Reused is set when the authorization is an earlier order's, reused
	// by the certificate's order (RFC 8555 §7.1.3 lets a server reuse a
	// valid authorization).
	Reused bool `json:"reused"`
}

// Revoked reports whether the certificate has been revoked.
func (c *Certificate) Revoked() bool { return !c.RevokedAt.IsZero() }
