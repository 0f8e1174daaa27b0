package ratelimit

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Override is one entry of the rate-limiting block's overrides: it raises
// or lowers one limit for one key. Key is "account:ID" for the account
// limits, "ip:ADDR" for account-creation, "domain:NAME" for
// registered-domain. "eab:LABEL" overrides order-creation (with the SAN
// budget) and pending-authorizations for every account bound with an
// External Account Binding key of that label: its buckets join the group
// with [Request.OverrideKey] "eab:LABEL", and an account's own override
// wins over its label's. The label's syntax is acme's rule, checked where
// the file is validated as a whole. Only the fields of that limit may be
// set; a field left out, or 0, keeps the block's value.
type Override struct {
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

// overrideKeyKind returns the key kind ("account" in "account:42") that
// an override of limit takes, whether an "eab:LABEL" group may stand for
// it, and false when the limit cannot be overridden.
func overrideKeyKind(limit string) (kind string, byLabel, ok bool) {
	switch limit {
	case "account-creation":
		return "ip", false, true
	case "order-creation", "pending-authorizations":
		return "account", true, true
	case "duplicate-certificate", "failed-validation":
		return "account", false, true
	case "registered-domain":
		return "domain", false, true
	}
	return "", false, false
}

// buckets returns the bucket keys an override of the block c sets and the
// limit of each: the block's settings of its limit with the fields o sets
// put over them.
func (o Override) buckets(c Config) ([]string, []Limit, error) {
	kind, id, ok := strings.Cut(o.Key, ":")
	if !ok || id == "" {
		return nil, nil, fmt.Errorf("key %q must be account:ID, eab:LABEL, ip:ADDRESS or domain:NAME", o.Key)
	}
	want, byLabel, known := overrideKeyKind(o.Limit)
	switch {
	case !known:
		return nil, nil, fmt.Errorf("limit %q cannot be overridden (one of account-creation, order-creation, duplicate-certificate, failed-validation, pending-authorizations, registered-domain)", o.Limit)
	case kind == "eab" && byLabel:
		id = o.Key // the group's Request.OverrideKey
	case kind != want && byLabel:
		return nil, nil, fmt.Errorf("limit %s takes a key of the form %s:… or eab:…, not %q", o.Limit, want, o.Key)
	case kind != want:
		return nil, nil, fmt.Errorf("limit %s takes a key of the form %s:…, not %q", o.Limit, want, o.Key)
	}
	var keys []string
	var lims []Limit
	add := func(n Name, key string, l Limit) {
		keys = append(keys, BucketKey(n, key))
		lims = append(lims, l)
	}
	switch o.Limit {
	case "account-creation":
		a, err := netip.ParseAddr(id)
		if err != nil {
			return nil, nil, fmt.Errorf("key %q: %q is not an IP address", o.Key, id)
		}
		s := c.AccountCreation
		over(&s.PerIPPerHour, o.PerIPPerHour)
		over(&s.Burst, o.Burst)
		add(AccountCreation, IPKey(a), s.limit())
	case "order-creation":
		s := c.OrderCreation
		over(&s.OrdersPerAccountPerHour, o.OrdersPerAccountPerHour)
		over(&s.OrderBurst, o.OrderBurst)
		over(&s.SANBudgetPerAccountPerHour, o.SANBudgetPerAccountPerHour)
		orders, san := s.limits()
		add(OrderCreation, id, orders)
		add(SANBudget, id, san)
	case "duplicate-certificate":
		add(DuplicateCertificate, id, o.window(c.DuplicateCertificate).count())
	case "failed-validation":
		add(FailedValidation, id, o.window(c.FailedValidation).rate())
	case "pending-authorizations":
		s := c.PendingAuthorizations
		over(&s.Max, o.Max)
		add(PendingAuthorizations, id, s.limit())
	case "registered-domain":
		add(RegisteredDomain, id, o.window(c.RegisteredDomain).rate())
	}
	for i, l := range lims {
		if err := l.Validate(keys[i]); err != nil {
			return nil, nil, err
		}
	}
	return keys, lims, nil
}

// window returns the block's window settings w with the fields o sets put
// over them.
func (o Override) window(w WindowConfig) WindowConfig {
	over(&w.MaxPerWindow, o.MaxPerWindow)
	over(&w.Window, o.Window)
	return w
}

// over puts an override's value v over the block's *dst; 0 keeps it.
func over[T int64 | time.Duration](dst *T, v T) {
	if v != 0 {
		*dst = v
	}
}
