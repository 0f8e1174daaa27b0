// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"crypto"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme/crl"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/ca"
)

// Config holds the protocol knobs of Service. Zero values get defaults.
type Config struct {
	// MaxIdentifiers caps the identifiers of one order.
	MaxIdentifiers int
	// OrderLifetime is how long a new order may stay unfinalized.
	OrderLifetime time.Duration
	// PendingAuthzLifetime is how long a new authorization stays pending.
	PendingAuthzLifetime time.Duration
	// ValidAuthzLifetime is how long a validated authorization can be
	// reused by new orders of the same account.
	ValidAuthzLifetime time.Duration
	// Challenges are the challenge types offered, in this order.
	Challenges []ChallengeType
	// ValidationWorkers bounds concurrent validations.
	ValidationWorkers int
	// ValidationWorkersPerAccount bounds the validations of one account
	// that the workers run at once, so that one account's slow or hung
	// validations leave the other workers to the other accounts
	// (validationqueue.go). Zero means a quarter of ValidationWorkers,
	// at least 1.
	ValidationWorkersPerAccount int
	// ValidationQueue bounds validations waiting for a worker.
	ValidationQueue int
	// ValidationTimeout bounds one validation.
	ValidationTimeout time.Duration
	// TermsOfService, when set, must be agreed to at new-account.
	TermsOfService string
	// CRLInterval is how often the CRL is regenerated without revocations.
	CRLInterval time.Duration
	// CRLDelay is how late a revocation may reach this replica's CRL: the
	// CRL updater checks for revocations this often and makes one CRL
	// for all it finds (acme/crl). 0 makes the CRL when it is read
	// after a revocation.
	CRLDelay time.Duration
	// Owner names this process in the leases it takes in the store
	// (validation jobs, background work); it must differ between
	// processes sharing a store. Empty means a random name.
	Owner string
	// ValidationLease is how long a claimed validation job is this
	// process's before any replica may take it over; at least
	// ValidationTimeout. Zero means twice ValidationTimeout.
	ValidationLease time.Duration
	// ClaimInterval is how often Run claims validation jobs whose lease
	// ended (their process died, or had no room for them). Zero means 5 s.
	ClaimInterval time.Duration
	// ChallengeWait is how long the POST of a challenge waits for its
	// validation, run by this process, to finish, so that the response
	// already shows the outcome and the client need not poll for it; a
	// validation that takes longer is answered as processing. Zero means
	// 1 s; negative, no wait.
	ChallengeWait time.Duration
	// EAB is the External Account Binding configuration (eab.go).
	EAB EABConfig
	// Log writes every issuance and revocation to the verifiable log
	// (logentry.go), in the store transaction that records it.
	Log bool
}

// Deps are what a Service works with: the store, the CA and the
// validator, which it needs, and the limits, observer, log and clock,
// which default.
type Deps struct {
	Store Store
	// CA is the active issuer's: it signs new certificates.
	CA *ca.CA
	// Issuers are every issuer whose CRL this Service makes, CA's among
	// them (issuers.go); empty means CA alone, as DefaultIssuer.
	Issuers   []Issuer
	Validator Validator
	// Limits is consulted at the points docs/ARCHITECTURE.md names; nil
	// means NoLimits.
	Limits Limits
	// Observer receives issuance, revocation and validation; nil means
	// NopObserver.
	Observer Observer
	// Audit receives issuances and revocations; nil means NopAuditor.
	Audit Auditor
	// Log nil discards.
	Log *slog.Logger
	// Now nil means time.Now.
	Now func() time.Time
}

// Live is the part of a Service's configuration that a reload changes
// (SetLive): the naming policy, the certificate profiles, the renewal
// windows and the backdate. They are swapped together, so a use case reads one consistent
// set.
type Live struct {
	// Policy is the naming policy; nil allows every DNS name and no IP
	// address, as an empty PolicyConfig does.
	Policy *Policy
	// Profiles are the certificate profiles offered; nil offers none.
	Profiles *Profiles
	// ARI shapes the renewal windows; zero fields get defaults.
	ARI renewal.Config
	// RenewEarly are the IDs of the issuers whose certificates' holders
	// are told to renew now (ARI windows in the past, replacements
	// exempt from account limits, as in an incident): the retired
	// intermediates of a rotation.
	RenewEarly []string
	// Backdate is how long before its signing a certificate starts when
	// its order asks for no validity period (ca.IssueRequest.Backdate):
	// a client whose clock runs slow accepts it at once. Its lifetime
	// stays the profile's, so it ends as much sooner.
	Backdate time.Duration
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.MaxIdentifiers <= 0 {
		c.MaxIdentifiers = 100
	}
	def(&c.OrderLifetime, 7*24*time.Hour)
	def(&c.PendingAuthzLifetime, 7*24*time.Hour)
	def(&c.ValidAuthzLifetime, 30*24*time.Hour)
	def(&c.ValidationTimeout, 30*time.Second)
	def(&c.CRLInterval, time.Hour)
	if c.ValidationLease < c.ValidationTimeout {
		c.ValidationLease = 2 * c.ValidationTimeout
	}
	def(&c.ClaimInterval, 5*time.Second)
	if c.ChallengeWait == 0 {
		c.ChallengeWait = time.Second
	}
	if c.Owner == "" {
		c.Owner = "weir-" + randomString(9)
	}
	if c.Challenges == nil {
		c.Challenges = []ChallengeType{ChallengeHTTP01, ChallengeDNS01, ChallengeTLSALPN01}
	}
	if c.ValidationWorkers <= 0 {
		c.ValidationWorkers = 16
	}
	if c.ValidationWorkersPerAccount <= 0 {
		// One account then holds at most 4 of the default 16 workers: it
		// takes four accounts stalling at once to fill the pool, and one
		// account's order of many names still validates 4 at a time.
		c.ValidationWorkersPerAccount = max(1, c.ValidationWorkers/4)
	}
	if c.ValidationQueue <= 0 {
		c.ValidationQueue = 4096
	}
}

// Caller is the authenticated sender of a request, as acme/jws established
// it. Account is nil for requests signed with an embedded JWK.
type Caller struct {
	Account    *Account
	Key        crypto.PublicKey
	KeyJSON    []byte
	Thumbprint Thumbprint
	IP         netip.Addr
}

// Service implements the ACME use cases of RFC 8555 §7.
type Service struct {
	cfg       Config
	store     Store
	ca        *ca.CA
	issuers   []Issuer // Deps.Issuers (issuers.go)
	validator Validator
	limits    Limits
	observer  Observer
	audit     Auditor
	log       *slog.Logger
	now       func() time.Time
	// startDefer is how long Run's start-up background work waits
	// (startQuiet; zero in the tests that build a Service themselves).
	startDefer time.Duration

	live atomic.Pointer[Live] // nil: the zero Live, with defaults
	plan *renewal.Planner

	jobs     *validationQueue // claimed challenges waiting for a worker (lease.go)
	running  atomic.Bool      // Run's workers are running
	waiters  sync.Map         // ChallengeID -> chan *Authorization: POSTs waiting for the outcome
	crl      *crl.Maker
	accounts accountCache
	tenants  tenantCache
}

// New makes a Service of cfg that starts with the rules of live.
func New(cfg Config, live Live, deps Deps) (*Service, error) {
	cfg.setDefaults()
	if deps.Store == nil || deps.CA == nil || deps.Validator == nil {
		return nil, errors.New("acme: the store, CA and validator are required")
	}
	if len(deps.Issuers) > 0 {
		if err := checkIssuers(deps.Issuers, deps.CA); err != nil {
			return nil, err
		}
	}
	if deps.Limits == nil {
		deps.Limits = NoLimits{}
	}
	if deps.Observer == nil {
		deps.Observer = NopObserver{}
	}
	if deps.Audit == nil {
		deps.Audit = NopAuditor{}
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	s := &Service{cfg: cfg, store: deps.Store, ca: deps.CA, issuers: slices.Clone(deps.Issuers), validator: deps.Validator,
		limits: deps.Limits, observer: deps.Observer, audit: deps.Audit, log: deps.Log, now: deps.Now,
		jobs: newValidationQueue(cfg.ValidationQueue, cfg.ValidationWorkersPerAccount)}
	s.SetLive(live)
	s.crl = crl.New(crl.Config{Store: deps.Store, Issuers: s.crlIssuers, Interval: cfg.CRLInterval, Delay: cfg.CRLDelay,
		Now: deps.Now, Log: deps.Log})
	s.plan = renewal.NewPlanner(deps.Now)
	s.startDefer = startQuiet
	return s, nil
}

// Config returns the effective configuration (with defaults applied).
func (s *Service) Config() Config { return s.cfg }

// SetLive swaps the naming policy, the certificate profiles and the
// renewal windows (live reload). Orders already created keep their
// profile's name; at finalize they are admitted again, and issued, under
// the rules in force then (readmitOrder).
func (s *Service) SetLive(l Live) {
	if l.Policy == nil {
		l.Policy = &Policy{}
	}
	l.ARI.SetDefaults()
	l.ARI.Slot = l.ARI.SlotFor(s.shortestLifetime(l.Profiles))
	s.live.Store(&l)
}

// rules returns the live rules in force.
func (s *Service) rules() *Live {
	if l := s.live.Load(); l != nil {
		return l
	}
	l := &Live{Policy: &Policy{}}
	l.ARI.SetDefaults()
	return l
}

// CA returns the issuing CA.
func (s *Service) CA() *ca.CA { return s.ca }

// Store returns the store (for the admin surfaces).
func (s *Service) Store() Store { return s.store }

// newID returns an object ID of 26 characters: the creation time in
// milliseconds (48 bits) then 80 random bits, in lowercase Crockford
// base32 (sortedIDs), so that IDs sort by creation time. The stores key
// orders, authorizations and challenges by ID: new rows then go to the
// end of those B-trees, where the rows of the other objects being worked
// on are too, instead of to a random page each, so a commit writes fewer
// pages and a read finds them in fewer. The 80 random bits keep IDs
// unguessable; IDs grant nothing anyway, as every resource is checked
// against the account that asks for it.
func newID[ID ~string]() ID {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := rand.Read(b[6:]); err != nil {
		panic(fmt.Sprintf("acme: crypto/rand failed: %v", err))
	}
	return ID(sortedIDs.EncodeToString(b[:]))
}

// sortedIDs is lowercase Crockford base32, whose alphabet is in ASCII
// order: the encodings of two byte strings of the same length compare as
// the byte strings do.
var sortedIDs = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newToken returns a challenge token: 256 bits, base64url without padding,
// 43 characters (RFC 8555 §8.3 wants at least 128 bits).
func newToken() string { return randomString(32) }

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("acme: crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// storeErr maps a Store error to a problem: not found → 404 naming the
// object (a format and its arguments), anything else internal.
func storeErr(err error, format string, args ...any) *Problem {
	if errors.Is(err, ErrNotFound) {
		return NotFound("%s does not exist", fmt.Sprintf(format, args...))
	}
	return Internal(err)
}

// requireAccount returns a problem unless c carries a valid account.
func requireAccount(c Caller) *Problem {
	if c.Account == nil {
		return Malformed("this request must be signed with an account key ID (kid), not an embedded JWK")
	}
	if c.Account.Status != StatusValid {
		return AccountNotValid(c.Account.ID, c.Account.Status)
	}
	return nil
}
