// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"fmt"
	"strings"
	"time"
)

// The defaults of Config: the one copy of them. A window is placed
// within [DefaultWindowStart, DefaultWindowEnd] of a certificate's
// lifetime, and the planner fills DefaultTarget of a capacity before it
// spreads further. DefaultMaxRenewalsPerHour is the ceiling a
// configuration file gets when it names none; a zero Config (planning
// off) keeps 0.
const (
	DefaultWindowStart        = 0.6
	DefaultWindowEnd          = 0.8
	DefaultTarget             = 0.5
	DefaultMaxRenewalsPerHour = 600
)

// Config shapes the renewal windows weir suggests (RFC 9773): the
// renewal-info block of the configuration file.
type Config struct {
	// WindowStart and WindowEnd bound where a window may be placed, as
	// fractions of a certificate's lifetime (DefaultWindowStart and
	// DefaultWindowEnd).
	WindowStart float64 `yaml:"window-start"`
	WindowEnd   float64 `yaml:"window-end"`
	// WindowWidth is each window's width; 0 means lifetime/45 (two days
	// for 90 days), at least an hour.
	WindowWidth time.Duration `yaml:"window-width"`
	// MaxRenewalsPerHour is the ceiling the planner keeps the CA's expected
	// renewal rate under; 0 turns planning off (every window is the
	// default one, from two thirds of the lifetime).
	MaxRenewalsPerHour int `yaml:"max-renewals-per-hour"`
	// Target is the fraction of a capacity (the ceiling, an account's
	// limiter headroom) the planner fills before it spreads further
	// (DefaultTarget), the margin for clients that renew at random times
	// within their windows. It is not a key of the configuration file.
	Target float64 `yaml:"-"`
	// ExplanationURL is sent with windows in the past (incident mode).
	ExplanationURL string `yaml:"explanation-url"`
	// Slot is the length of the plan's time slots (SlotFor): an hour
	// unless the configured lifetimes are short; 0 means an hour. It is
	// not a key of the configuration file.
	Slot time.Duration `yaml:"-"`
}

// slotSpan is how many slots the part of the shortest lifetime a window
// may lie in ([window-start, window-end]) must hold for the plan to count
// in hours: with fewer, whole-hour windows would not fit in it, and the
// plan counts in minutes.
const slotSpan = 4

// SlotFor is the slot the plan counts renewals in when the shortest
// lifetime the configuration issues is shortest: an hour, or a minute
// when [window-start, window-end] of that lifetime is shorter than
// slotSpan hours (lifetimes under 20 hours with the defaults). A minute is
// the finest: a window is at least a minute wide. Counting in minutes
// costs 60 times the hours' memory and placement time for the long
// lifetimes issued beside the short ones.
func (c Config) SlotFor(shortest time.Duration) time.Duration {
	span := time.Duration(float64(shortest) * (c.WindowEnd - c.WindowStart))
	if shortest > 0 && span < slotSpan*time.Hour {
		return time.Minute
	}
	return time.Hour
}

// slot is Slot, an hour when unset.
func (c Config) slot() time.Duration {
	if c.Slot <= 0 {
		return time.Hour
	}
	return c.Slot
}

// DefaultConfig is the renewal-info block of a configuration file that
// sets none of its keys.
func DefaultConfig() Config {
	return Config{WindowStart: DefaultWindowStart, WindowEnd: DefaultWindowEnd, MaxRenewalsPerHour: DefaultMaxRenewalsPerHour}
}

// SetDefaults gives the fields left zero (or out of range) their
// defaults: WindowStart, WindowEnd (at least 0.1 after WindowStart) and
// Target.
func (c *Config) SetDefaults() {
	if c.WindowStart <= 0 {
		c.WindowStart = DefaultWindowStart
	}
	if c.WindowEnd <= c.WindowStart {
		c.WindowEnd = max(DefaultWindowEnd, c.WindowStart+0.1)
	}
	if c.Target <= 0 || c.Target > 1 {
		c.Target = DefaultTarget
	}
}

// Validate checks a configured block: each error names its key
// (window-start, …) as the first thing it says, so that a caller can put
// the block's path before it.
func (c Config) Validate() []error {
	var errs []error
	if c.WindowStart <= 0 || c.WindowStart >= 1 {
		errs = append(errs, fmt.Errorf("window-start: %v must be a fraction of the lifetime between 0 and 1", c.WindowStart))
	}
	if c.WindowEnd <= c.WindowStart || c.WindowEnd >= 1 {
		errs = append(errs, fmt.Errorf("window-end: %v must be after window-start and below 1", c.WindowEnd))
	}
	if c.WindowWidth < 0 {
		errs = append(errs, fmt.Errorf("window-width: must not be negative"))
	}
	if c.MaxRenewalsPerHour < 0 {
		errs = append(errs, fmt.Errorf("max-renewals-per-hour: must not be negative (0 turns planning off)"))
	}
	if c.ExplanationURL != "" && !strings.HasPrefix(c.ExplanationURL, "https://") && !strings.HasPrefix(c.ExplanationURL, "http://") {
		errs = append(errs, fmt.Errorf("explanation-url: %q is not an http(s) URL", c.ExplanationURL))
	}
	return errs
}
