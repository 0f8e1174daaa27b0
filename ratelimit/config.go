// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// Config is the rate-limiting block of weir's configuration file
// (config.example.yaml, docs/rate-limits.md): where the buckets live, what
// a request gets when that backend fails, and the size of each limit.
// [DefaultConfig] holds the one copy of the defaults; a file is decoded
// over it, so a key the file leaves out keeps its default. [Config.Validate]
// reports what is wrong with a block, and [Config.Policy] turns a valid one
// into what a [Limiter] enforces.
type Config struct {
	// Backend is where the buckets live: "sqlite", "redis" or "memory".
	Backend string `yaml:"backend"`
	// Redis reaches the Redis server(s) of backend redis.
	Redis RedisConfig `yaml:"redis"`
	// OnBackendError is what a request gets when the backend cannot decide
	// within BackendTimeout: "degrade" (an in-process limiter at the same
	// limits decides), "deny" or "allow" (unlimited).
	OnBackendError string        `yaml:"on-backend-error"`
	BackendTimeout time.Duration `yaml:"backend-timeout"`
	// DegradedReadyAfter is how long the limiter may run degraded before
	// /readyz answers 503.
	DegradedReadyAfter time.Duration `yaml:"degraded-ready-after"`
	// HelpURL is linked from every 429 as Link rel="help".
	HelpURL string `yaml:"help-url"`
	// Whitelist holds the IPs and CIDRs that bypass the IP-keyed limits
	// (global, account-creation). Their syntax is checked where they are
	// parsed, with the other IP ranges of the file.
	Whitelist []string `yaml:"whitelist"`

	Global                GlobalConfig          `yaml:"global"`
	AccountCreation       AccountCreationConfig `yaml:"account-creation"`
	OrderCreation         OrderCreationConfig   `yaml:"order-creation"`
	DuplicateCertificate  WindowConfig          `yaml:"duplicate-certificate"`
	FailedValidation      WindowConfig          `yaml:"failed-validation"`
	PendingAuthorizations PendingConfig         `yaml:"pending-authorizations"`
	RegisteredDomain      WindowConfig          `yaml:"registered-domain"`
	Overrides             []Override            `yaml:"overrides"`
}

// RedisConfig reaches the Redis server(s) of the redis backend. It is
// plain data: the storage that dials Redis reads it.
type RedisConfig struct {
	// Addrs with several entries is a Cluster; with MasterName, Sentinel.
	Addrs      []string `yaml:"addrs"`
	MasterName string   `yaml:"master-name"`
	// PasswordFile holds the password, so that it stays out of the file.
	PasswordFile string `yaml:"password-file"`
	DB           int    `yaml:"db"`
	TLS          bool   `yaml:"tls"`
}

// GlobalConfig is the in-process per-IP layer ([Global]).
type GlobalConfig struct {
	Enabled           bool  `yaml:"enabled"`
	RequestsPerMinute int64 `yaml:"requests-per-minute"`
	Burst             int64 `yaml:"burst"`
}

// AccountCreationConfig is account creation per client IP
// ([AccountCreation]).
type AccountCreationConfig struct {
	Enabled      bool  `yaml:"enabled"`
	PerIPPerHour int64 `yaml:"per-ip-per-hour"`
	Burst        int64 `yaml:"burst"`
}

// OrderCreationConfig is the order count ([OrderCreation]) and the SAN
// budget ([SANBudget]) of each account, enabled together.
type OrderCreationConfig struct {
	Enabled                    bool  `yaml:"enabled"`
	OrdersPerAccountPerHour    int64 `yaml:"orders-per-account-per-hour"`
	OrderBurst                 int64 `yaml:"order-burst"`
	SANBudgetPerAccountPerHour int64 `yaml:"san-budget-per-account-per-hour"`
}

// WindowConfig is N per rolling window: an exact count for
// [DuplicateCertificate], a rate with a burst of N for [FailedValidation]
// and [RegisteredDomain].
type WindowConfig struct {
	Enabled      bool          `yaml:"enabled"`
	MaxPerWindow int64         `yaml:"max-per-window"`
	Window       time.Duration `yaml:"window"`
}

// PendingConfig caps the unexpired pending authorizations of an account
// ([PendingAuthorizations]).
type PendingConfig struct {
	Enabled bool  `yaml:"enabled"`
	Max     int64 `yaml:"max"`
}

// DefaultHelpURL documents the limits; a 429 links to it unless help-url
// says otherwise.
const DefaultHelpURL = "https://github.com/weir-pki/weir/blob/main/docs/rate-limits.md"

// DefaultConfig returns the defaults of docs/rate-limits.md, the one copy
// of them: [DefaultPolicy] and config.example.yaml are derived from it.
// Every limit is enabled except registered-domain.
func DefaultConfig() Config {
	week := 168 * time.Hour
	return Config{
		Backend:            "sqlite",
		Redis:              RedisConfig{Addrs: []string{"127.0.0.1:6379"}},
		OnBackendError:     OnBackendDegrade,
		BackendTimeout:     500 * time.Millisecond,
		DegradedReadyAfter: 30 * time.Second,
		HelpURL:            DefaultHelpURL,
		Global:             GlobalConfig{Enabled: true, RequestsPerMinute: 200, Burst: 20},
		AccountCreation:    AccountCreationConfig{Enabled: true, PerIPPerHour: 5, Burst: 2},
		OrderCreation: OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 5,
			SANBudgetPerAccountPerHour: 100},
		DuplicateCertificate:  WindowConfig{Enabled: true, MaxPerWindow: 5, Window: week},
		FailedValidation:      WindowConfig{Enabled: true, MaxPerWindow: 5, Window: time.Hour},
		PendingAuthorizations: PendingConfig{Enabled: true, Max: 30},
		RegisteredDomain:      WindowConfig{Enabled: false, MaxPerWindow: 50, Window: week},
	}
}

// The on-backend-error values.
const (
	// OnBackendDegrade decides with an in-process limiter at the
	// configured limits: each replica admits at most the limit, so N
	// replicas at most N times the limit.
	OnBackendDegrade = "degrade"
	// OnBackendDeny refuses with 503.
	OnBackendDeny = "deny"
	// OnBackendAllow admits without any limit.
	OnBackendAllow = "allow"
)

// configKey is the key of the block in the file; every problem starts with
// its path below it.
const configKey = "rate-limiting"

// Validate reports every problem of the block at once (errors.Join), each
// as "<key path>: <what is wrong>", e.g.
// "rate-limiting.order-creation.order-burst: must be at least 1, got 0 …".
// An explicit 0 is a problem: a limit is turned off with enabled: false.
func (c Config) Validate() error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf(configKey+"."+key+": "+format, args...))
	}
	switch c.Backend {
	case "sqlite", "memory":
	case "redis":
		if len(c.Redis.Addrs) == 0 {
			add("redis.addrs", "at least one address is needed for backend redis")
		}
	default:
		add("backend", "%q must be sqlite, redis or memory", c.Backend)
	}
	switch c.OnBackendError {
	case OnBackendDegrade, OnBackendDeny, OnBackendAllow:
	default:
		add("on-backend-error", "%q must be degrade, deny or allow", c.OnBackendError)
	}
	positiveDur := func(key string, d time.Duration) {
		if d <= 0 {
			add(key, "must be a positive duration, got %s", d)
		}
	}
	positive := func(key string, v int64) {
		if v < 1 {
			add(key, "must be at least 1, got %d (to turn the limit off, set enabled: false)", v)
		}
	}
	positiveDur("backend-timeout", c.BackendTimeout)
	positiveDur("degraded-ready-after", c.DegradedReadyAfter)
	// A limit's fields, then, once they are sound, what a Limiter would
	// refuse of the limits they make, so that a block Validate accepts
	// always makes a Policy. sound keeps the overrides of a limit whose
	// block is at fault from repeating its problems.
	sound := map[string]bool{}
	limit := func(key string, fields func(), lims ...Limit) {
		n := len(errs)
		fields()
		if len(errs) == n {
			errs = append(errs, limitProblems(configKey+"."+key, lims...)...)
		}
		sound[key] = len(errs) == n
	}
	limit("global", func() {
		positive("global.requests-per-minute", c.Global.RequestsPerMinute)
		positive("global.burst", c.Global.Burst)
	}, c.Global.limit())
	limit("account-creation", func() {
		positive("account-creation.per-ip-per-hour", c.AccountCreation.PerIPPerHour)
		positive("account-creation.burst", c.AccountCreation.Burst)
	}, c.AccountCreation.limit())
	orders, san := c.OrderCreation.limits()
	limit("order-creation", func() {
		positive("order-creation.orders-per-account-per-hour", c.OrderCreation.OrdersPerAccountPerHour)
		positive("order-creation.order-burst", c.OrderCreation.OrderBurst)
		positive("order-creation.san-budget-per-account-per-hour", c.OrderCreation.SANBudgetPerAccountPerHour)
	}, orders, san)
	for _, w := range []struct {
		key string
		w   WindowConfig
		l   Limit
	}{
		{"duplicate-certificate", c.DuplicateCertificate, c.DuplicateCertificate.count()},
		{"failed-validation", c.FailedValidation, c.FailedValidation.rate()},
		{"registered-domain", c.RegisteredDomain, c.RegisteredDomain.rate()},
	} {
		limit(w.key, func() {
			positive(w.key+".max-per-window", w.w.MaxPerWindow)
			positiveDur(w.key+".window", w.w.Window)
		}, w.l)
	}
	limit("pending-authorizations", func() {
		positive("pending-authorizations.max", c.PendingAuthorizations.Max)
	}, c.PendingAuthorizations.limit())
	for i, o := range c.Overrides {
		errs = append(errs, o.check(c, fmt.Sprintf("%s.overrides[%d]", configKey, i), sound[o.Limit])...)
	}
	return errors.Join(errs...)
}

// limitProblems reports, at path, what a Limiter would refuse of lims: a
// rate faster than one per microsecond, a burst spanning a century.
func limitProblems(path string, lims ...Limit) []error {
	var errs []error
	for _, l := range lims {
		for _, p := range l.problems() {
			errs = append(errs, fmt.Errorf("%s: %s", path, p))
		}
	}
	return errs
}

// Policy returns what a Limiter enforces under the block c, or the
// problems Validate reports.
func (c Config) Policy() (Policy, error) {
	if err := c.Validate(); err != nil {
		return Policy{}, err
	}
	p := c.basePolicy()
	for i, o := range c.Overrides {
		keys, lims, err := o.buckets(c)
		if err != nil { // Validate reports it; kept for safety
			return Policy{}, fmt.Errorf("%s.overrides[%d]: %w", configKey, i, err)
		}
		for j := range keys {
			p.Overrides[keys[j]] = lims[j]
		}
	}
	return p, p.Validate()
}

// basePolicy is the policy of c without its overrides.
func (c Config) basePolicy() Policy {
	orders, san := c.OrderCreation.limits()
	return Policy{
		Limits: map[Name]Limit{
			Global:                c.Global.limit(),
			AccountCreation:       c.AccountCreation.limit(),
			OrderCreation:         orders,
			SANBudget:             san,
			DuplicateCertificate:  c.DuplicateCertificate.count(),
			FailedValidation:      c.FailedValidation.rate(),
			PendingAuthorizations: c.PendingAuthorizations.limit(),
			RegisteredDomain:      c.RegisteredDomain.rate(),
		},
		Enabled: map[Name]bool{
			Global:                c.Global.Enabled,
			AccountCreation:       c.AccountCreation.Enabled,
			OrderCreation:         c.OrderCreation.Enabled,
			SANBudget:             c.OrderCreation.Enabled,
			DuplicateCertificate:  c.DuplicateCertificate.Enabled,
			FailedValidation:      c.FailedValidation.Enabled,
			PendingAuthorizations: c.PendingAuthorizations.Enabled,
			RegisteredDomain:      c.RegisteredDomain.Enabled,
		},
		Overrides: map[string]Limit{},
	}
}

func (g GlobalConfig) limit() Limit {
	return Limit{Count: g.RequestsPerMinute, Period: time.Minute, Burst: g.Burst}
}

func (a AccountCreationConfig) limit() Limit {
	return Limit{Count: a.PerIPPerHour, Period: time.Hour, Burst: a.Burst}
}

// limits returns the order-creation limit and the SAN budget, whose burst
// is the whole hour's budget so that one order may use it at once.
func (o OrderCreationConfig) limits() (orders, san Limit) {
	return Limit{Count: o.OrdersPerAccountPerHour, Period: time.Hour, Burst: o.OrderBurst},
		Limit{Count: o.SANBudgetPerAccountPerHour, Period: time.Hour, Burst: o.SANBudgetPerAccountPerHour}
}

// count is w as an exact count (duplicate-certificate).
func (w WindowConfig) count() Limit { return Limit{Max: w.MaxPerWindow, Window: w.Window} }

// rate is w as a rate whose burst is the whole window's allowance.
func (w WindowConfig) rate() Limit {
	return Limit{Count: w.MaxPerWindow, Period: w.Window, Burst: w.MaxPerWindow}
}

func (p PendingConfig) limit() Limit { return Limit{Max: p.Max} }
