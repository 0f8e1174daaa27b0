// SPDX-License-Identifier: Apache-2.0

// Package challenge checks ACME challenges against the world: http-01 and
// dns-01 (RFC 8555 §8.3, §8.4) and tls-alpn-01 (RFC 8737), for dns and ip
// identifiers (RFC 8738), and for dns identifiers the drafts dns-account-01
// (dnsaccount01.go) and dns-persist-01 (dnspersist01.go). Its Validator
// implements acme.Validator and acme.BoundedValidator.
//
// Name resolution. Every DNS lookup (A, AAAA and TXT) goes to the one server
// named by Config.Resolver (or the system's servers when it is empty),
// through Go's own stub resolver; names are looked up fully qualified, so no
// search domains apply, though, as for any Go lookup, /etc/hosts is consulted
// for A and AAAA first. The Go resolver cannot tell NXDOMAIN from an empty
// answer, so both are reported as "no records" (a dns problem for A/AAAA, an
// unauthorized "No TXT record found" for dns-01). Addresses are tried IPv6
// first, then IPv4, as Let's Encrypt does; the next address is tried only
// when connecting to the previous one fails, never after a connection was
// made. ip identifiers are used as they are. CAA records (caa.go), which
// Go's resolver cannot ask for, go to the same server through a small
// client of this package (to the first nameserver of /etc/resolv.conf when
// Config.Resolver is empty).
//
// Lab mode. Config.HTTPPort and Config.TLSALPNPort replace ports 80 and 443
// whenever a connection is dialed, including for http-01 redirects: a
// redirect to http://name/ dials HTTPPort and one to https://name/ dials
// TLSALPNPort. http-01 URLs shown in problem details keep the standard
// ports, and the Host header carries no port unless a redirect names one.
//
// Problem types. Resolution failures are dns problems; failures to connect,
// timeouts, resets, too many redirects and unacceptable redirect targets
// (scheme, port or host) are connection problems, as in Let's Encrypt's
// Boulder; TLS handshake and ALPN failures are tls problems; a wrong HTTP
// status, body, TXT record or certificate is an unauthorized problem. A
// request the validator cannot act on (a disabled or unknown challenge
// type, dns-01 for an IP address, a bad token or identifier value) is a
// malformed problem, an unknown identifier type an unsupportedIdentifier
// one, and a validation whose context the caller canceled a serverInternal
// one. Every problem carries the request's identifier.
package challenge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultHTTPPort     = 80
	DefaultTLSALPNPort  = 443
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBodyBytes = 8 << 10
)

// maxTokenLen bounds the length of a challenge token; RFC 8555 §8.1 tokens
// are base64url encodings of at least 128 bits, far shorter than this.
const maxTokenLen = 256

// DialFunc dials a network connection, like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Config configures a Validator. The zero value is usable: New fills in
// the defaults.
type Config struct {
	// HTTPPort is the port dialed for http-01 and for http redirect
	// targets (0 means 80).
	HTTPPort int
	// TLSALPNPort is the port dialed for tls-alpn-01 and for https
	// redirect targets (0 means 443).
	TLSALPNPort int
	// Resolver is the "host:port" of the DNS server used for every lookup
	// (A, AAAA and TXT); "" means the system resolver.
	Resolver string
	// Timeout bounds one whole validation (0 means 10s).
	Timeout time.Duration
	// MaxBodyBytes bounds the http-01 response body (0 means 8 KiB).
	MaxBodyBytes int64
	// Enabled lists the challenge types this validator accepts; a nil map
	// enables http-01, dns-01 and tls-alpn-01.
	Enabled map[acme.ChallengeType]bool
	// AccountURIPrefix is the URL of accounts without the account ID:
	// the account URL is AccountURIPrefix + ID (RFC 8555 §7.3), which
	// CAA accounturi (RFC 8657 §3), dns-account-01's label and
	// dns-persist-01's accounturi (the URL, or its hashed URI) name; its
	// scheme and host tell another server's account URLs. Required for
	// the two drafts.
	AccountURIPrefix string
	// Persist configures dns-persist-01 (dnspersist01.go).
	Persist PersistConfig
	// Now is the clock of persistUntil (nil: time.Now).
	Now func() time.Time
	// DialContext, if set, dials every validation connection (not the
	// connections to the DNS server). For tests and lab setups.
	DialContext DialFunc
	// CAA, when enabled, makes the Validator an acme.CAAChecker that
	// asks Resolver for CAA records (caa.go).
	CAA CAAConfig
	// Egress says which addresses validations may connect to
	// (egress.go); SetEgress replaces it while running.
	Egress EgressConfig
	// Own are weir's own listeners, which validations never connect to
	// (NewEgress).
	Own []netip.AddrPort
}

// knownType reports whether t is a challenge type this package implements.
func knownType(t acme.ChallengeType) bool {
	return slices.Contains(acme.AllChallengeTypes(), t)
}

// Validate reports every problem with the configuration, joined with
// errors.Join: ports must be 0 (default) or 1..65535, Resolver must be
// empty or a host:port with a numeric port, Timeout and MaxBodyBytes must
// not be negative, and Enabled may name only known types, at least one of
// them enabled.
func (c Config) Validate() error {
	var errs []error
	for _, p := range []struct {
		name string
		port int
	}{{"HTTP port", c.HTTPPort}, {"TLS-ALPN port", c.TLSALPNPort}} {
		if p.port < 0 || p.port > 65535 {
			errs = append(errs, fmt.Errorf("challenge: config: %s %d out of range 1..65535", p.name, p.port))
		}
	}
	if c.Resolver != "" {
		if err := checkHostPort(c.Resolver); err != nil {
			errs = append(errs, fmt.Errorf("challenge: config: resolver %q: %w", c.Resolver, err))
		}
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("challenge: config: timeout %v is negative", c.Timeout))
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("challenge: config: max body bytes %d is negative", c.MaxBodyBytes))
	}
	if c.Enabled != nil {
		anyOn := false
		for t, on := range c.Enabled {
			if !knownType(t) {
				errs = append(errs, fmt.Errorf("challenge: config: unknown challenge type %q", t))
			}
			anyOn = anyOn || on
		}
		if !anyOn {
			errs = append(errs, errors.New("challenge: config: no challenge type enabled"))
		}
	}
	errs = append(errs, c.CAA.validate()...)
	errs = append(errs, c.validateDrafts()...)
	errs = append(errs, c.Egress.Validate())
	return errors.Join(errs...)
}

// checkHostPort checks that s is host:port with a non-empty host and a
// port in 1..65535.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("empty host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number in 1..65535", port)
	}
	return nil
}

// withDefaults returns c with zero fields set to their defaults and its own
// copy of Enabled.
func (c Config) withDefaults() Config {
	if c.HTTPPort == 0 {
		c.HTTPPort = DefaultHTTPPort
	}
	if c.TLSALPNPort == 0 {
		c.TLSALPNPort = DefaultTLSALPNPort
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Enabled != nil {
		m := make(map[acme.ChallengeType]bool, len(c.Enabled))
		for t, on := range c.Enabled {
			m[t] = on
		}
		c.Enabled = m
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.CAA.Identities = slices.Clone(c.CAA.Identities)
	c.Persist.IssuerDomainNames = slices.Clone(c.Persist.IssuerDomainNames)
	return c
}

// Validator checks challenges. It is safe for concurrent use; each
// validation uses fresh connections.
type Validator struct {
	cfg      Config
	resolver *net.Resolver
	dial     atomic.Pointer[DialFunc]
	egress   atomic.Pointer[Egress]
}

// New returns a Validator for cfg after applying the defaults, or the
// errors of cfg.Validate.
func New(cfg Config) (*Validator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	v := &Validator{cfg: cfg, resolver: &net.Resolver{PreferGo: true}}
	if cfg.Resolver != "" {
		addr := cfg.Resolver
		v.resolver.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	v.SetDialContext(cfg.DialContext)
	eg, err := NewEgress(cfg.Egress, cfg.Own...)
	if err != nil {
		return nil, err
	}
	v.SetEgress(eg)
	return v, nil
}

// SetEgress replaces the egress policy, which must not be nil. It may be
// called at any time; a validation keeps the policy it started with.
func (v *Validator) SetEgress(e *Egress) {
	v.egress.Store(e)
}

// SetDialContext replaces the function that dials validation connections
// (not those to the DNS server); nil restores net.Dialer. It may be called
// at any time; validations already running keep the dialer they started
// with.
func (v *Validator) SetDialContext(f func(ctx context.Context, network, addr string) (net.Conn, error)) {
	if f == nil {
		// A validation connection carries one request: TCP keep-alive
		// probes would never fire, and turning them on costs four
		// setsockopt calls per connection.
		d := net.Dialer{KeepAlive: -1}
		f = d.DialContext
	}
	df := DialFunc(f)
	v.dial.Store(&df)
}

// enabled reports whether challenge type t is enabled.
func (c Config) enabled(t acme.ChallengeType) bool {
	if c.Enabled == nil {
		return t == acme.ChallengeHTTP01 || t == acme.ChallengeDNS01 || t == acme.ChallengeTLSALPN01
	}
	return knownType(t) && c.Enabled[t]
}

// Validate checks one challenge within Config.Timeout and returns nil when
// it is satisfied, else a problem saying precisely what was seen, with
// Identifier set to req.Identifier. It implements acme.Validator.
func (v *Validator) Validate(ctx context.Context, req acme.ValidationRequest) *acme.Problem {
	_, p := v.ValidateUntil(ctx, req)
	return p
}

// ValidateUntil is Validate that also returns, on success, the time after
// which the validation must not be relied on: a dns-persist-01 record's
// persistUntil, else zero. It implements acme.BoundedValidator.
func (v *Validator) ValidateUntil(ctx context.Context, req acme.ValidationRequest) (time.Time, *acme.Problem) {
	until, p := v.validate(ctx, req)
	if p == nil {
		return until, nil
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		// The caller gave up (for example at shutdown): not the
		// applicant's fault, so do not report a validation failure.
		p = acme.Internal(fmt.Errorf("challenge: validation canceled: %w (%v)", context.Cause(ctx), p))
	}
	ident := req.Identifier
	p.Identifier = &ident
	return time.Time{}, p
}

// validate checks req and dispatches on its type.
func (v *Validator) validate(ctx context.Context, req acme.ValidationRequest) (time.Time, *acme.Problem) {
	if !knownType(req.Type) {
		return time.Time{}, acme.Malformed("unsupported challenge type %q", req.Type)
	}
	if !v.cfg.enabled(req.Type) {
		return time.Time{}, acme.Malformed("challenge type %q is not enabled on this server", req.Type)
	}
	if !validToken(req.Token) {
		return time.Time{}, acme.Malformed("invalid challenge token %q: must be 1..%d base64url characters (RFC 8555 §8.1)", excerpt([]byte(req.Token)), maxTokenLen)
	}
	if req.KeyAuthorization == "" {
		return time.Time{}, acme.Internal(errors.New("challenge: empty key authorization"))
	}
	t, p := parseIdentifier(req.Identifier)
	if p != nil {
		return time.Time{}, p
	}
	ctx, cancel := context.WithTimeout(ctx, v.cfg.Timeout)
	defer cancel()
	switch req.Type {
	case acme.ChallengeHTTP01:
		return time.Time{}, v.validateHTTP01(ctx, t, req)
	case acme.ChallengeDNS01:
		return time.Time{}, v.validateDNS01(ctx, t, req)
	case acme.ChallengeDNSAccount01:
		return time.Time{}, v.validateDNSAccount01(ctx, t, req)
	case acme.ChallengeDNSPersist01:
		return v.validateDNSPersist01(ctx, t, req)
	default:
		return time.Time{}, v.validateTLSALPN01(ctx, t, req)
	}
}

// validToken reports whether tok is a non-empty base64url string (RFC 8555
// §8.1), which also keeps it safe inside a URL path.
func validToken(tok string) bool {
	if tok == "" || len(tok) > maxTokenLen {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// target is a parsed identifier: exactly one of name and ip is set.
type target struct {
	name string     // lower-case DNS name without a trailing dot
	ip   netip.Addr // for ip identifiers (RFC 8738)
}

// host returns the target as a host name or IP address string.
func (t target) host() string {
	if t.ip.IsValid() {
		return t.ip.String()
	}
	return t.name
}

// urlHost returns the target as the host part of a URL (IPv6 bracketed).
func (t target) urlHost() string {
	if t.ip.Is6() {
		return "[" + t.ip.String() + "]"
	}
	return t.host()
}

// isHost reports whether host, the host of a URL, is t itself.
func (t target) isHost(host string) bool {
	if t.ip.IsValid() {
		ip, err := netip.ParseAddr(host)
		return err == nil && ip.Unmap() == t.ip
	}
	return strings.EqualFold(strings.TrimSuffix(host, "."), t.name)
}

// parseIdentifier checks ident and returns it as a target.
func parseIdentifier(ident acme.Identifier) (target, *acme.Problem) {
	switch ident.Type {
	case acme.IdentifierDNS:
		name := strings.ToLower(strings.TrimSuffix(ident.Value, "."))
		if !isDNSName(name) {
			return target{}, acme.Malformed("invalid dns identifier %s", excerpt([]byte(ident.Value)))
		}
		return target{name: name}, nil
	case acme.IdentifierIP:
		ip, err := netip.ParseAddr(ident.Value)
		if err != nil || ip.Zone() != "" {
			return target{}, acme.Malformed("invalid ip identifier %s", excerpt([]byte(ident.Value)))
		}
		return target{ip: ip.Unmap()}, nil
	}
	return target{}, acme.NewProblem(acme.ProbUnsupportedIdentifier, "unsupported identifier type %q", ident.Type)
}

// isDNSName reports whether s is a syntactically valid host name: dot
// separated labels of 1..63 letters, digits and hyphens, at most 253
// characters. Wildcards must have been stripped by the caller.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
