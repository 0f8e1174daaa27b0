package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// RateLimitingConfig is the rate-limiting: block (docs/rate-limits.md).
type RateLimitingConfig struct {
	Backend        string        `yaml:"backend"`
	Redis          RedisConfig   `yaml:"redis"`
	OnBackendError string        `yaml:"on-backend-error"`
	BackendTimeout time.Duration `yaml:"backend-timeout"`
	HelpURL        string        `yaml:"help-url"`
	Whitelist      []string      `yaml:"whitelist"`

	Global                GlobalLimit      `yaml:"global"`
	AccountCreation       AccountLimit     `yaml:"account-creation"`
	OrderCreation         OrderLimit       `yaml:"order-creation"`
	DuplicateCertificate  WindowLimit      `yaml:"duplicate-certificate"`
	FailedValidation      WindowLimit      `yaml:"failed-validation"`
	PendingAuthorizations PendingLimit     `yaml:"pending-authorizations"`
	RegisteredDomain      WindowLimit      `yaml:"registered-domain"`
	Overrides             []OverrideConfig `yaml:"overrides"`
}

// RedisConfig reaches the Redis server(s) of the redis backend.
type RedisConfig struct {
	Addrs        []string `yaml:"addrs"`
	MasterName   string   `yaml:"master-name"`
	PasswordFile string   `yaml:"password-file"`
	DB           int      `yaml:"db"`
	TLS          bool     `yaml:"tls"`
}

// GlobalLimit is the in-process per-IP layer.
type GlobalLimit struct {
	Enabled           bool  `yaml:"enabled"`
	RequestsPerMinute int64 `yaml:"requests-per-minute"`
	Burst             int64 `yaml:"burst"`
}

// AccountLimit is account creation per IP.
type AccountLimit struct {
	Enabled      bool  `yaml:"enabled"`
	PerIPPerHour int64 `yaml:"per-ip-per-hour"`
	Burst        int64 `yaml:"burst"`
}

// OrderLimit is the order count and SAN budget per account.
type OrderLimit struct {
	Enabled                    bool  `yaml:"enabled"`
	OrdersPerAccountPerHour    int64 `yaml:"orders-per-account-per-hour"`
	OrderBurst                 int64 `yaml:"order-burst"`
	SANBudgetPerAccountPerHour int64 `yaml:"san-budget-per-account-per-hour"`
}

// WindowLimit is N per rolling window.
type WindowLimit struct {
	Enabled      bool          `yaml:"enabled"`
	MaxPerWindow int64         `yaml:"max-per-window"`
	Window       time.Duration `yaml:"window"`
}

// PendingLimit caps in-flight authorizations per account.
type PendingLimit struct {
	Enabled bool  `yaml:"enabled"`
	Max     int64 `yaml:"max"`
}

// OverrideConfig raises or lowers one limit for one key: "account:ID" for
// the account limits, "ip:ADDR" for account-creation, "domain:NAME" for
// registered-domain. "eab:LABEL" overrides order-creation (with the SAN
// budget) and pending-authorizations for every account bound with an
// External Account Binding key of that label; an account's own override
// wins over its label's. Only the fields of that limit may be set.
type OverrideConfig struct {
	Limit                      string        `yaml:"limit"`
	Key                        string        `yaml:"key"`
	PerIPPerHour               int64         `yaml:"per-ip-per-hour"`
	Burst                      int64         `yaml:"burst"`
	OrdersPerAccountPerHour    int64         `yaml:"orders-per-account-per-hour"`
	OrderBurst                 int64         `yaml:"order-burst"`
	SANBudgetPerAccountPerHour int64         `yaml:"san-budget-per-account-per-hour"`
	MaxPerWindow               int64         `yaml:"max-per-window"`
	Window                     time.Duration `yaml:"window"`
	Max                        int64         `yaml:"max"`
}

// defaultHelpURL documents the limits; a 429 links to it.
const defaultHelpURL = "https://github.com/weir-pki/weir/blob/main/docs/rate-limits.md"

func defaultRateLimiting() RateLimitingConfig {
	return RateLimitingConfig{
		Backend:         "sqlite",
		Redis:           RedisConfig{Addrs: []string{"127.0.0.1:6379"}},
		OnBackendError:  "allow",
		BackendTimeout:  500 * time.Millisecond,
		HelpURL:         defaultHelpURL,
		Global:          GlobalLimit{Enabled: true, RequestsPerMinute: 200, Burst: 20},
		AccountCreation: AccountLimit{Enabled: true, PerIPPerHour: 5, Burst: 2},
		OrderCreation: OrderLimit{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 5,
			SANBudgetPerAccountPerHour: 100},
		DuplicateCertificate:  WindowLimit{Enabled: true, MaxPerWindow: 5, Window: 168 * time.Hour},
		FailedValidation:      WindowLimit{Enabled: true, MaxPerWindow: 5, Window: time.Hour},
		PendingAuthorizations: PendingLimit{Enabled: true, Max: 30},
		RegisteredDomain:      WindowLimit{Enabled: false, MaxPerWindow: 50, Window: 168 * time.Hour},
	}
}

// parsePrefixes reads IPs and CIDRs (acme.ParseIPRange), naming the key of
// a bad entry.
func parsePrefixes(key string, list []string) ([]netip.Prefix, []error) {
	var out []netip.Prefix
	var errs []error
	for i, s := range list {
		p, err := acme.ParseIPRange(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %v", key, i, err))
			continue
		}
		out = append(out, p)
	}
	return out, errs
}

// positive adds an error naming key when v < 1: an explicit 0 is refused
// (turn a limit off with enabled: false).
func positive(errs *[]error, key string, v int64) {
	if v < 1 {
		*errs = append(*errs, fmt.Errorf("%s: must be at least 1, got %d (to turn the limit off, set enabled: false)", key, v))
	}
}

func positiveDur(errs *[]error, key string, d time.Duration) {
	if d <= 0 {
		*errs = append(*errs, fmt.Errorf("%s: must be a positive duration, got %s", key, d))
	}
}

// validate checks the block; maxNames is acme.max-identifiers, the largest
// cost an order can ask of the SAN budget and of pending-authorizations.
func (c RateLimitingConfig) validate(maxNames int) error {
	var errs []error
	p := "rate-limiting."
	switch c.Backend {
	case "sqlite", "memory":
	case "redis":
		if len(c.Redis.Addrs) == 0 {
			errs = append(errs, fmt.Errorf("%sredis.addrs: at least one address is needed for backend redis", p))
		}
	default:
		errs = append(errs, fmt.Errorf("%sbackend: %q must be sqlite, redis or memory", p, c.Backend))
	}
	if c.OnBackendError != "allow" && c.OnBackendError != "deny" {
		errs = append(errs, fmt.Errorf("%son-backend-error: %q must be allow or deny", p, c.OnBackendError))
	}
	positiveDur(&errs, p+"backend-timeout", c.BackendTimeout)
	_, perrs := parsePrefixes(p+"whitelist", c.Whitelist)
	errs = append(errs, perrs...)
	positive(&errs, p+"global.requests-per-minute", c.Global.RequestsPerMinute)
	positive(&errs, p+"global.burst", c.Global.Burst)
	positive(&errs, p+"account-creation.per-ip-per-hour", c.AccountCreation.PerIPPerHour)
	positive(&errs, p+"account-creation.burst", c.AccountCreation.Burst)
	positive(&errs, p+"order-creation.orders-per-account-per-hour", c.OrderCreation.OrdersPerAccountPerHour)
	positive(&errs, p+"order-creation.order-burst", c.OrderCreation.OrderBurst)
	positive(&errs, p+"order-creation.san-budget-per-account-per-hour", c.OrderCreation.SANBudgetPerAccountPerHour)
	if c.OrderCreation.Enabled && c.OrderCreation.SANBudgetPerAccountPerHour >= 1 && c.OrderCreation.SANBudgetPerAccountPerHour < int64(maxNames) {
		errs = append(errs, fmt.Errorf("%sorder-creation.san-budget-per-account-per-hour: %d is smaller than acme.max-identifiers (%d), so the largest orders could never pass", p, c.OrderCreation.SANBudgetPerAccountPerHour, maxNames))
	}
	for name, w := range map[string]WindowLimit{"duplicate-certificate": c.DuplicateCertificate, "failed-validation": c.FailedValidation, "registered-domain": c.RegisteredDomain} {
		positive(&errs, p+name+".max-per-window", w.MaxPerWindow)
		positiveDur(&errs, p+name+".window", w.Window)
	}
	positive(&errs, p+"pending-authorizations.max", c.PendingAuthorizations.Max)
	if c.PendingAuthorizations.Enabled && c.PendingAuthorizations.Max >= 1 && c.PendingAuthorizations.Max < int64(maxNames) {
		errs = append(errs, fmt.Errorf("%spending-authorizations.max: %d is smaller than acme.max-identifiers (%d), so an order with that many new names could never be created", p, c.PendingAuthorizations.Max, maxNames))
	}
	for i, o := range c.Overrides {
		if _, _, err := o.limits(c); err != nil {
			errs = append(errs, fmt.Errorf("%soverrides[%d]: %w", p, i, err))
		}
	}
	sortErrors(errs)
	return errors.Join(errs...)
}

// sortErrors orders errors by text, so reports are stable.
func sortErrors(errs []error) {
	for i := 1; i < len(errs); i++ {
		for j := i; j > 0 && errs[j].Error() < errs[j-1].Error(); j-- {
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}

// limiterConfig builds the ratelimit.Policy of the block (validated).
func (c RateLimitingConfig) limiterConfig() (ratelimit.Policy, error) {
	hour := time.Hour
	cfg := ratelimit.Policy{
		Limits: map[ratelimit.Name]ratelimit.Limit{
			ratelimit.Global:                {Count: c.Global.RequestsPerMinute, Period: time.Minute, Burst: c.Global.Burst},
			ratelimit.AccountCreation:       {Count: c.AccountCreation.PerIPPerHour, Period: hour, Burst: c.AccountCreation.Burst},
			ratelimit.OrderCreation:         {Count: c.OrderCreation.OrdersPerAccountPerHour, Period: hour, Burst: c.OrderCreation.OrderBurst},
			ratelimit.SANBudget:             {Count: c.OrderCreation.SANBudgetPerAccountPerHour, Period: hour, Burst: c.OrderCreation.SANBudgetPerAccountPerHour},
			ratelimit.DuplicateCertificate:  {Max: c.DuplicateCertificate.MaxPerWindow, Window: c.DuplicateCertificate.Window},
			ratelimit.FailedValidation:      {Count: c.FailedValidation.MaxPerWindow, Period: c.FailedValidation.Window, Burst: c.FailedValidation.MaxPerWindow},
			ratelimit.PendingAuthorizations: {Max: c.PendingAuthorizations.Max},
			ratelimit.RegisteredDomain:      {Count: c.RegisteredDomain.MaxPerWindow, Period: c.RegisteredDomain.Window, Burst: c.RegisteredDomain.MaxPerWindow},
		},
		Enabled: map[ratelimit.Name]bool{
			ratelimit.Global:                c.Global.Enabled,
			ratelimit.AccountCreation:       c.AccountCreation.Enabled,
			ratelimit.OrderCreation:         c.OrderCreation.Enabled,
			ratelimit.SANBudget:             c.OrderCreation.Enabled,
			ratelimit.DuplicateCertificate:  c.DuplicateCertificate.Enabled,
			ratelimit.FailedValidation:      c.FailedValidation.Enabled,
			ratelimit.PendingAuthorizations: c.PendingAuthorizations.Enabled,
			ratelimit.RegisteredDomain:      c.RegisteredDomain.Enabled,
		},
		Overrides: map[string]ratelimit.Limit{},
	}
	for i, o := range c.Overrides {
		keys, lims, err := o.limits(c)
		if err != nil {
			return ratelimit.Policy{}, fmt.Errorf("rate-limiting.overrides[%d]: %w", i, err)
		}
		for j := range keys {
			cfg.Overrides[keys[j]] = lims[j]
		}
	}
	return cfg, cfg.Validate()
}

// limits returns the bucket keys and limits of an override; fields it
// leaves at zero take the block's value.
func (o OverrideConfig) limits(c RateLimitingConfig) ([]string, []ratelimit.Limit, error) {
	kind, id, ok := strings.Cut(o.Key, ":")
	if !ok || id == "" {
		return nil, nil, fmt.Errorf("key %q must be account:ID, eab:LABEL, ip:ADDRESS or domain:NAME", o.Key)
	}
	or := func(v, d int64) int64 {
		if v != 0 {
			return v
		}
		return d
	}
	orDur := func(v, d time.Duration) time.Duration {
		if v != 0 {
			return v
		}
		return d
	}
	want := map[string]string{"account-creation": "ip", "order-creation": "account", "duplicate-certificate": "account",
		"failed-validation": "account", "pending-authorizations": "account", "registered-domain": "domain"}
	// The limits an EAB label's accounts can have overridden as a group.
	byLabel := map[string]bool{"order-creation": true, "pending-authorizations": true}
	if w, known := want[o.Limit]; !known {
		return nil, nil, fmt.Errorf("limit %q cannot be overridden (one of account-creation, order-creation, duplicate-certificate, failed-validation, pending-authorizations, registered-domain)", o.Limit)
	} else if kind == "eab" && byLabel[o.Limit] {
		if err := acme.CheckEABLabel(id); err != nil {
			return nil, nil, fmt.Errorf("key %q: %w", o.Key, err)
		}
		// The group's override key (ratelimit.Request.OverrideKey).
		id = acme.EABOverrideKey(id)
	} else if w != kind {
		if byLabel[o.Limit] {
			return nil, nil, fmt.Errorf("limit %s takes a key of the form %s:… or eab:…, not %q", o.Limit, w, o.Key)
		}
		return nil, nil, fmt.Errorf("limit %s takes a key of the form %s:…, not %q", o.Limit, w, o.Key)
	}
	var keys []string
	var lims []ratelimit.Limit
	add := func(n ratelimit.Name, key string, l ratelimit.Limit) {
		keys = append(keys, ratelimit.BucketKey(n, key))
		lims = append(lims, l)
	}
	switch o.Limit {
	case "account-creation":
		a, err := netip.ParseAddr(id)
		if err != nil {
			return nil, nil, fmt.Errorf("key %q: %q is not an IP address", o.Key, id)
		}
		add(ratelimit.AccountCreation, ratelimit.IPKey(a), ratelimit.Limit{Count: or(o.PerIPPerHour, c.AccountCreation.PerIPPerHour), Period: time.Hour, Burst: or(o.Burst, c.AccountCreation.Burst)})
	case "order-creation":
		add(ratelimit.OrderCreation, id, ratelimit.Limit{Count: or(o.OrdersPerAccountPerHour, c.OrderCreation.OrdersPerAccountPerHour), Period: time.Hour, Burst: or(o.OrderBurst, c.OrderCreation.OrderBurst)})
		san := or(o.SANBudgetPerAccountPerHour, c.OrderCreation.SANBudgetPerAccountPerHour)
		add(ratelimit.SANBudget, id, ratelimit.Limit{Count: san, Period: time.Hour, Burst: san})
	case "duplicate-certificate":
		add(ratelimit.DuplicateCertificate, id, ratelimit.Limit{Max: or(o.MaxPerWindow, c.DuplicateCertificate.MaxPerWindow), Window: orDur(o.Window, c.DuplicateCertificate.Window)})
	case "failed-validation":
		n := or(o.MaxPerWindow, c.FailedValidation.MaxPerWindow)
		add(ratelimit.FailedValidation, id, ratelimit.Limit{Count: n, Period: orDur(o.Window, c.FailedValidation.Window), Burst: n})
	case "pending-authorizations":
		add(ratelimit.PendingAuthorizations, id, ratelimit.Limit{Max: or(o.Max, c.PendingAuthorizations.Max)})
	case "registered-domain":
		n := or(o.MaxPerWindow, c.RegisteredDomain.MaxPerWindow)
		add(ratelimit.RegisteredDomain, id, ratelimit.Limit{Count: n, Period: orDur(o.Window, c.RegisteredDomain.Window), Burst: n})
	}
	for i, l := range lims {
		if err := l.Validate(keys[i]); err != nil {
			return nil, nil, err
		}
	}
	return keys, lims, nil
}
