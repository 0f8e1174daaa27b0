// SPDX-License-Identifier: Apache-2.0

package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/challenge"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
)

// Config is the whole YAML file; config.example.yaml documents every key.
type Config struct {
	DataDir      string           `yaml:"data-dir"`
	Server       ServerConfig     `yaml:"server"`
	ACME         ACMEConfig       `yaml:"acme"`
	CA           CAConfig         `yaml:"ca"`
	Challenges   ChallengesConfig `yaml:"challenges"`
	Storage      StorageConfig    `yaml:"storage"`
	RateLimiting ratelimit.Config `yaml:"rate-limiting"`
	Admin        AdminConfig      `yaml:"admin"`
	Log          LogConfig        `yaml:"log"`
	Audit        AuditConfig      `yaml:"audit"`
	// Transparency is the verifiable log (transparency.go).
	Transparency TransparencyConfig `yaml:"transparency"`
}

// AdminConfig is the administrators' listener: the admin API, the
// dashboard, /metrics, /healthz and /readyz.
type AdminConfig struct {
	// Enabled turns the admin listener on (default true).
	Enabled *bool `yaml:"enabled"`
	// Listen is the admin listener's address; loopback by default.
	Listen string `yaml:"listen"`
	// TokenFile holds the bearer token, relative to data-dir; generated
	// (mode 0600) at first start when missing.
	TokenFile string `yaml:"token-file"`
	// Auth is "token" (default) or "none"; none is refused on a
	// non-loopback address.
	Auth string `yaml:"auth"`
	// TLS serves the admin listener over HTTPS with the server's
	// certificate; required on a non-loopback address.
	TLS bool `yaml:"tls"`
	// Hosts are more names the admin listener answers for, beyond the
	// ones adminHosts derives (a name it is reached by through a proxy or
	// DNS).
	Hosts []string `yaml:"hosts"`
}

// On reports whether the admin listener is on (admin.enabled, true
// unless set false).
func (a AdminConfig) On() bool { return enabled(a.Enabled) }

// ACMEConfig holds protocol settings and the directory meta.
type ACMEConfig struct {
	Website              string        `yaml:"website"`
	TermsOfService       string        `yaml:"terms-of-service"`
	CAAIdentities        []string      `yaml:"caa-identities"`
	OrderLifetime        time.Duration `yaml:"order-lifetime"`
	PendingAuthzLifetime time.Duration `yaml:"pending-authz-lifetime"`
	ValidAuthzLifetime   time.Duration `yaml:"valid-authz-lifetime"`
	MaxIdentifiers       int           `yaml:"max-identifiers"`
	ValidationWorkers    int           `yaml:"validation-workers"`
	// ValidationWorkersPerAccount caps one account's share of the
	// validation workers; 0 lets acme.Config choose.
	ValidationWorkersPerAccount int            `yaml:"validation-workers-per-account"`
	NonceLifetime               time.Duration  `yaml:"nonce-lifetime"`
	OrdersPerPage               int            `yaml:"orders-per-page"`
	RenewalInfo                 renewal.Config `yaml:"renewal-info"`
	// Nonces says where Replay-Nonces live, so that several replicas
	// redeem each other's (nonces.go).
	Nonces NoncesConfig `yaml:"nonces"`
	// ExternalAccountBinding requires (or not) an EAB key for new
	// accounts (RFC 8555 §7.3.4); keys come from weir eab create.
	ExternalAccountBinding acme.EABConfig `yaml:"external-account-binding"`
}

// renewalInfoErrors checks the renewal-info block, each error under its
// path in the file.
func renewalInfoErrors(c renewal.Config) []error {
	var errs []error
	for _, err := range c.Validate() {
		errs = append(errs, fmt.Errorf("acme.renewal-info.%w", err))
	}
	return errs
}

// CAConfig is the issuing CA.
type CAConfig struct {
	Name string `yaml:"name"`
	// Intermediate is the issuing intermediate and how its key is
	// reached (intermediate.go).
	Intermediate IntermediateConfig `yaml:"intermediate"`
	RootFile     string             `yaml:"root-file"`
	// RootCRLFile is the root's CRL to serve (rootcrl.go); "" means the
	// data directory's ca/root-crl.der, when there is one. It reloads
	// live, and is read again when it changes.
	RootCRLFile         string        `yaml:"root-crl-file"`
	CertificateLifetime time.Duration `yaml:"certificate-lifetime"`
	// Backdate is how long before its signing a certificate starts
	// (backdate.go); it reloads live.
	Backdate     time.Duration     `yaml:"backdate"`
	AllowEd25519 bool              `yaml:"allow-ed25519"`
	CRLInterval  time.Duration     `yaml:"crl-interval"`
	Policy       acme.PolicyConfig `yaml:"policy"`
	// NameConstraints puts the policy into a generated root and
	// intermediate as X.509 name constraints (nameConstraints).
	NameConstraints bool `yaml:"name-constraints"`
	// DefaultProfile is the certificate profile of orders that ask for
	// none; "" (with no profiles) offers none.
	DefaultProfile string `yaml:"default-profile"`
	// Profiles are the certificate profiles offered
	// (draft-aaron-acme-profiles); a file that sets them replaces the
	// defaults.
	Profiles profileMap `yaml:"profiles"`
	// CRLDelay bounds how late a revocation reaches the CRL
	// (acme.Config.CRLDelay); 0 makes the CRL when it is read.
	CRLDelay time.Duration `yaml:"crl-delay"`
	// Issuers are the intermediates besides ca.intermediate (issuers.go).
	Issuers []IssuerConfig `yaml:"issuers"`
	// ActiveIssuer is the ID of the issuer that signs new certificates:
	// "default" (ca.intermediate) or one of ca.issuers.
	ActiveIssuer string `yaml:"active-issuer"`
	// CRLShards splits each issuer's CRL into this many partitioned CRLs
	// (issuers.go); 1 is one CRL.
	CRLShards int `yaml:"crl-shards"`
}

// ChallengesConfig selects challenge types and where they are validated.
type ChallengesConfig struct {
	HTTP01    PortChallenge `yaml:"http-01"`
	DNS01     Toggle        `yaml:"dns-01"`
	TLSALPN01 PortChallenge `yaml:"tls-alpn-01"`
	// DNSAccount01 and DNSPersist01 are the draft challenge types
	// (configdrafts.go).
	DNSAccount01 Toggle           `yaml:"dns-account-01"`
	DNSPersist01 PersistChallenge `yaml:"dns-persist-01"`
	DNSResolver  string           `yaml:"dns-resolver"`
	Timeout      time.Duration    `yaml:"timeout"`
	// CAA checks CAA records (RFC 8659, RFC 8657) after each successful
	// validation; off by default, for internal zones.
	CAA CAAConfig `yaml:"caa"`
	// Egress says which addresses validations may connect to; it
	// reloads live.
	Egress challenge.EgressConfig `yaml:"egress"`
}

// CAAConfig is the challenges.caa block.
type CAAConfig struct {
	Enabled bool `yaml:"enabled"`
	// Identities are the issuer domain names by which CAA records name
	// weir; empty means acme.caa-identities.
	Identities []string `yaml:"identities"`
}

// caaIdentities are the names by which CAA records name weir:
// challenges.caa.identities, else acme.caa-identities.
func (c Config) caaIdentities() []string {
	if len(c.Challenges.CAA.Identities) > 0 {
		return c.Challenges.CAA.Identities
	}
	return c.ACME.CAAIdentities
}

// directoryCAAIdentities is the directory's meta.caaIdentities:
// acme.caa-identities, else challenges.caa.identities.
func (c Config) directoryCAAIdentities() []string {
	if len(c.ACME.CAAIdentities) > 0 {
		return c.ACME.CAAIdentities
	}
	return c.Challenges.CAA.Identities
}

// validateCAA checks the challenges.caa block: every identity a domain
// name, and at least one when CAA is on.
func (c Config) validateCAA() []error {
	var errs []error
	for _, id := range c.Challenges.CAA.Identities {
		if !isIssuerDomain(id) {
			errs = append(errs, fmt.Errorf("challenges.caa.identities: %q is not a domain name", id))
		}
	}
	if c.Challenges.CAA.Enabled && len(c.caaIdentities()) == 0 {
		errs = append(errs, fmt.Errorf("challenges.caa.identities: CAA checking is on but names no identity of weir's; set it (or acme.caa-identities) to the issuer domain names your CAA records use"))
	}
	return errs
}

// isIssuerDomain reports whether s is a domain name as a CAA issue
// property names a CA (RFC 8659 §4.2): dot-separated labels of letters,
// digits and hyphens.
func isIssuerDomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// PortChallenge is a challenge type validated on a port.
type PortChallenge struct {
	Enabled *bool `yaml:"enabled"`
	Port    int   `yaml:"port"`
}

// Toggle is a challenge type that can be switched off.
type Toggle struct {
	Enabled *bool `yaml:"enabled"`
}

// StorageConfig selects the ACME object store (storage.go).
type StorageConfig struct {
	// Driver is sqlite (the default) or postgres.
	Driver string `yaml:"driver"`
	// Path is the SQLite database, relative to data-dir.
	Path string `yaml:"path"`
	// DSN is the PostgreSQL connection string; DSNFile names a file that
	// holds it instead, so that its password stays out of the YAML.
	// Exactly one is set when Driver is postgres.
	DSN     string `yaml:"dsn"`
	DSNFile string `yaml:"dsn-file"`
	// MaxConns caps the PostgreSQL pool; 0 is pgx's default.
	MaxConns int `yaml:"max-conns"`
}

// LogConfig sets the log output.
type LogConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// DefaultConfig is what runs with no file: every key's default.
func DefaultConfig() Config {
	on := func() *bool { b := true; return &b }
	off := func() *bool { b := false; return &b }
	return Config{
		DataDir: "./weir-data",
		Server: ServerConfig{Listen: "localhost:14000", HTTP: PublicHTTPConfig{Listen: defaultHTTPListen},
			MaxBodyBytes: 64 << 10, Connections: defaultConnections()},
		ACME: ACMEConfig{
			OrderLifetime: 7 * 24 * time.Hour, PendingAuthzLifetime: 7 * 24 * time.Hour,
			ValidAuthzLifetime: 30 * 24 * time.Hour, MaxIdentifiers: 30, ValidationWorkers: 16,
			NonceLifetime: time.Hour, Nonces: NoncesConfig{Backend: nonceAuto}, OrdersPerPage: 100,
			RenewalInfo: renewal.DefaultConfig(),
		},
		CA: CAConfig{Name: "weir", Intermediate: IntermediateConfig{Signer: ca.SignerConfig{Type: ca.SignerFile}}, CertificateLifetime: 2160 * time.Hour, Backdate: time.Minute, CRLInterval: time.Hour, CRLDelay: 5 * time.Second,
			ActiveIssuer: acme.DefaultIssuer, CRLShards: 1, DefaultProfile: profileTLSServer, Profiles: defaultProfiles()},
		Challenges: ChallengesConfig{
			HTTP01: PortChallenge{Enabled: on(), Port: 80}, DNS01: Toggle{Enabled: on()},
			TLSALPN01: PortChallenge{Enabled: on(), Port: 443}, Timeout: 10 * time.Second,
			DNSAccount01: Toggle{Enabled: off()}, DNSPersist01: PersistChallenge{Enabled: off()},
			Egress: challenge.EgressConfig{Default: "allow"},
		},
		Storage:      StorageConfig{Driver: "sqlite", Path: "weir.db"},
		RateLimiting: ratelimit.DefaultConfig(),
		Admin:        AdminConfig{Enabled: on(), Listen: "127.0.0.1:14001", TokenFile: "admin-token", Auth: "token"},
		Log:          LogConfig{Level: "info", Format: "text"},
		Audit:        defaultAudit(),
		Transparency: defaultTransparency(),
	}
}

// ParseConfig reads data, the YAML text of the configuration file named
// name ("" for none), over the defaults and validates the result. Its
// error is a *ConfigProblems that lists every problem of the file with
// its line and key, found in one pass (readConfig).
func ParseConfig(name string, data []byte) (Config, error) {
	cfg := DefaultConfig()
	if err := readConfig(name, data, &cfg, func() error { return cfg.Validate() }); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// LoadConfig reads the configuration file at path (ParseConfig), or
// returns the defaults when path is "".
func LoadConfig(path string) (Config, error) {
	if path == "" {
		cfg := DefaultConfig()
		return cfg, cfg.Validate()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(path, data)
}

// Validate reports every problem at once, each naming its key.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.DataDir == "" {
		add("data-dir: must not be empty")
	}
	if _, _, err := net.SplitHostPort(c.Server.Listen); err != nil {
		add("server.listen: %q is not host:port", c.Server.Listen)
	}
	errs = append(errs, c.validateHTTP()...)
	if (c.Server.TLS.CertFile == "") != (c.Server.TLS.KeyFile == "") {
		add("server.tls: cert-file and key-file must both be set or both be empty")
	}
	if c.Server.MaxBodyBytes < 1024 {
		add("server.max-body-bytes: %d is too small (at least 1024)", c.Server.MaxBodyBytes)
	}
	errs = append(errs, c.CA.Intermediate.validate("ca.intermediate")...)
	errs = append(errs, c.CA.validateIssuers()...)
	errs = append(errs, c.Audit.validate()...)
	errs = append(errs, c.validateTransparency()...)
	positive := map[string]time.Duration{
		"ca.certificate-lifetime": c.CA.CertificateLifetime, "ca.crl-interval": c.CA.CRLInterval,
		"acme.order-lifetime": c.ACME.OrderLifetime, "acme.pending-authz-lifetime": c.ACME.PendingAuthzLifetime,
		"acme.valid-authz-lifetime": c.ACME.ValidAuthzLifetime, "acme.nonce-lifetime": c.ACME.NonceLifetime,
		"challenges.timeout": c.Challenges.Timeout,
	}
	for _, key := range sortedKeys(positive) {
		if positive[key] <= 0 {
			add("%s: must be a positive duration, got %s", key, positive[key])
		}
	}
	if c.CA.CRLDelay < 0 || c.CA.CRLDelay > c.CA.CRLInterval {
		add("ca.crl-delay: must be between 0 and ca.crl-interval (%s), got %s", c.CA.CRLInterval, c.CA.CRLDelay)
	}
	if c.ACME.MaxIdentifiers < 1 {
		add("acme.max-identifiers: must be at least 1")
	}
	errs = append(errs, renewalInfoErrors(c.ACME.RenewalInfo)...)
	errs = append(errs, c.Server.Connections.validate()...)
	errs = append(errs, c.validateNonces()...)
	if c.ACME.ExternalAccountBinding.Required && !enabled(c.Admin.Enabled) {
		add("acme.external-account-binding.required: EAB keys are made through the admin API (weir eab create), so it needs admin.enabled: true")
	}
	if c.ACME.OrdersPerPage < 1 {
		add("acme.orders-per-page: must be at least 1")
	}
	if c.ACME.ValidationWorkers < 1 {
		add("acme.validation-workers: must be at least 1")
	}
	if n := c.ACME.ValidationWorkersPerAccount; n < 0 || n > max(c.ACME.ValidationWorkers, 1) {
		add("acme.validation-workers-per-account: %d must be between 1 and acme.validation-workers (%d), or 0 for the default", n, c.ACME.ValidationWorkers)
	}
	ports := map[string]int{"challenges.http-01.port": c.Challenges.HTTP01.Port, "challenges.tls-alpn-01.port": c.Challenges.TLSALPN01.Port}
	for _, key := range sortedKeys(ports) {
		if p := ports[key]; p < 1 || p > 65535 {
			add("%s: %d is not a port number", key, p)
		}
	}
	if r := c.Challenges.DNSResolver; r != "" {
		if _, port, err := net.SplitHostPort(r); err != nil || port == "" {
			add("challenges.dns-resolver: %q is not host:port", r)
		} else if _, err := strconv.Atoi(port); err != nil {
			add("challenges.dns-resolver: port %q is not a number", port)
		}
	}
	if len(offeredChallenges(c)) == 0 {
		add("challenges: at least one challenge type must be enabled")
	}
	errs = append(errs, c.validateCAA()...)
	errs = append(errs, c.validateDrafts()...)
	if err := c.Challenges.Egress.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Storage.validate()...)
	if _, err := parseLevel(c.Log.Level); err != nil {
		add("log.level: %v", err)
	}
	errs = append(errs, c.Admin.validate()...)
	if c.Log.Format != "text" && c.Log.Format != "json" {
		add("log.format: %q must be text or json", c.Log.Format)
	}
	if err := c.CA.Policy.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.CA.validateNameConstraints()...)
	errs = append(errs, c.CA.validateBackdate()...)
	if err := acme.ValidateProfiles(c.CA.DefaultProfile, c.CA.Profiles); err != nil {
		errs = append(errs, err)
	}
	_, perrs := parsePrefixes("server.trusted-proxies", c.Server.TrustedProxies)
	errs = append(errs, perrs...)
	errs = append(errs, c.validateRateLimiting()...)
	return errors.Join(errs...)
}

func enabled(b *bool) bool { return b == nil || *b }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseLevel reads a log level name.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("%q is not one of debug, info, warn, error", s)
	}
	return l, nil
}

// validate checks the admin block: an admin surface off loopback must
// need a token and speak TLS.
func (a AdminConfig) validate() []error {
	if !enabled(a.Enabled) {
		return nil
	}
	var errs []error
	host, _, err := net.SplitHostPort(a.Listen)
	if err != nil {
		return append(errs, fmt.Errorf("admin.listen: %q is not host:port", a.Listen))
	}
	switch a.Auth {
	case "token":
		if a.TokenFile == "" {
			errs = append(errs, fmt.Errorf("admin.token-file: must not be empty when admin.auth is token"))
		}
	case "none":
	default:
		errs = append(errs, fmt.Errorf("admin.auth: %q must be token or none", a.Auth))
	}
	errs = append(errs, validateAdminHosts(a.Hosts)...)
	if !isLoopbackHost(host) {
		if a.Auth != "token" {
			errs = append(errs, fmt.Errorf("admin.auth: the admin listener %q is not on loopback, so it must require a token (admin.auth: token)", a.Listen))
		}
		if !a.TLS {
			errs = append(errs, fmt.Errorf("admin.tls: the admin listener %q is not on loopback, so it must use TLS (admin.tls: true)", a.Listen))
		}
	}
	return errs
}

// isLoopbackHost reports whether a listen host binds to loopback only:
// "localhost" or a loopback IP. An empty host binds every interface.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
