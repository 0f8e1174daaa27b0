// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Override is one entry of the rate-limiting block's overrides: it raises
// or lowers one limit for one key. Key is "account:ID" for the account
// limits, "ip:ADDR" for account-creation, "domain:NAME" for
// registered-domain. "eab:LABEL" overrides order-creation (with the SAN
// budget) and pending-authorizations for every account bound with an
// External Account Binding key of that label, and "tenant:NAME" for every
// account bound with a key of that tenant: its buckets join those groups
// ([Request.OverrideKey] "eab:LABEL tenant:NAME"). The most specific
// override of a limit wins: account:ID, then eab:LABEL, then tenant:NAME,
// then the block's value. The syntax of labels and tenant names is acme's
// rule, checked where the file is validated as a whole.
//
// Only the fields of that limit's block (but enabled) may be set, and a
// field is set when the file has it, hence the pointers. A field left out,
// or 0, keeps the block's value.
type Override struct {
	Limit                      string         `yaml:"limit"`
	Key                        string         `yaml:"key"`
	PerIPPerHour               *int64         `yaml:"per-ip-per-hour"`
	Burst                      *int64         `yaml:"burst"`
	OrdersPerAccountPerHour    *int64         `yaml:"orders-per-account-per-hour"`
	OrderBurst                 *int64         `yaml:"order-burst"`
	SANBudgetPerAccountPerHour *int64         `yaml:"san-budget-per-account-per-hour"`
	MaxPerWindow               *int64         `yaml:"max-per-window"`
	Window                     *time.Duration `yaml:"window"`
	Max                        *int64         `yaml:"max"`
}

// overrideRule is what an override of one limit may say.
type overrideRule struct {
	// keyKind is the kind of key it takes ("account" in "account:42").
	keyKind string
	// byGroup says whether an "eab:LABEL" or "tenant:NAME" group may
	// stand for the key.
	byGroup bool
	// block is the limit's settings in the block; their keys but enabled
	// are the fields the override may set.
	block any
}

// overrideRuleOf returns the rule of overrides of limit, false when the
// limit cannot be overridden.
func overrideRuleOf(limit string) (overrideRule, bool) {
	switch limit {
	case "account-creation":
		return overrideRule{"ip", false, AccountCreationConfig{}}, true
	case "order-creation":
		return overrideRule{"account", true, OrderCreationConfig{}}, true
	case "pending-authorizations":
		return overrideRule{"account", true, PendingConfig{}}, true
	case "duplicate-certificate", "failed-validation":
		return overrideRule{"account", false, WindowConfig{}}, true
	case "registered-domain":
		return overrideRule{"domain", false, WindowConfig{}}, true
	}
	return overrideRule{}, false
}

// fields returns the keys an override may set: the block's but enabled.
func (r overrideRule) fields() []string {
	var out []string
	t := reflect.TypeOf(r.block)
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("yaml"); k != "enabled" {
			out = append(out, k)
		}
	}
	return out
}

// setField is a limit field an override sets.
type setField struct {
	key   string // as in the file
	value reflect.Value
}

// set returns the limit fields o sets, in the order of the type.
func (o Override) set() []setField {
	var out []setField
	v := reflect.ValueOf(o)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			out = append(out, setField{v.Type().Field(i).Tag.Get("yaml"), f.Elem()})
		}
	}
	return out
}

// check reports the problems of o, at path ("rate-limiting.overrides[2]")
// of the block c: an unknown limit, a key of the wrong form, a field of
// another limit, a value out of range, and, when the block's settings of
// the limit are sound (blockSound), what the Limiter would refuse of the
// limits o makes.
func (o Override) check(c Config, path string, blockSound bool) []error {
	rule, ok := overrideRuleOf(o.Limit)
	if !ok {
		return []error{fmt.Errorf("%s: limit %q cannot be overridden (one of account-creation, order-creation, duplicate-certificate, failed-validation, pending-authorizations, registered-domain)", path, o.Limit)}
	}
	var errs []error
	fields := rule.fields()
	for _, f := range o.set() {
		if !slices.Contains(fields, f.key) {
			errs = append(errs, fmt.Errorf("%s.%s: %s overrides take %s", path, f.key, o.Limit, sayList(fields)))
		} else if f.value.Int() < 0 {
			errs = append(errs, fmt.Errorf("%s.%s: must be positive, got %v (leave it out to keep the block's value)", path, f.key, f.value))
		}
	}
	_, lims, err := o.buckets(c)
	if err != nil {
		return append(errs, fmt.Errorf("%s: %w", path, err))
	}
	if len(errs) == 0 && blockSound {
		errs = limitProblems(path, lims...)
	}
	return errs
}

// buckets returns the bucket keys an override of the block c sets and the
// limit of each: the block's settings of its limit with the fields o sets
// put over them.
func (o Override) buckets(c Config) ([]string, []Limit, error) {
	rule, ok := overrideRuleOf(o.Limit)
	if !ok {
		return nil, nil, fmt.Errorf("limit %q cannot be overridden", o.Limit)
	}
	kind, id, ok := strings.Cut(o.Key, ":")
	switch {
	case !ok || id == "":
		return nil, nil, fmt.Errorf("key %q must be account:ID, eab:LABEL, tenant:NAME, ip:ADDRESS or domain:NAME", o.Key)
	case (kind == "eab" || kind == "tenant") && rule.byGroup:
		id = o.Key // the group's key in Request.OverrideKey
	case kind != rule.keyKind && rule.byGroup:
		return nil, nil, fmt.Errorf("limit %s takes a key of the form %s:…, eab:… or tenant:…, not %q", o.Limit, rule.keyKind, o.Key)
	case kind != rule.keyKind:
		return nil, nil, fmt.Errorf("limit %s takes a key of the form %s:…, not %q", o.Limit, rule.keyKind, o.Key)
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
	return keys, lims, nil
}

// window returns the block's window settings w with the fields o sets put
// over them.
func (o Override) window(w WindowConfig) WindowConfig {
	over(&w.MaxPerWindow, o.MaxPerWindow)
	over(&w.Window, o.Window)
	return w
}

// over puts an override's value v over the block's *dst; nil or 0 keeps
// it.
func over[T int64 | time.Duration](dst *T, v *T) {
	if v != nil && *v != 0 {
		*dst = *v
	}
}

// sayList joins keys as a sentence does: "a", "a and b", "a, b and c".
func sayList(keys []string) string {
	if len(keys) < 2 {
		return strings.Join(keys, "")
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
