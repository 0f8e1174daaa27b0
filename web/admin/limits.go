// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// describeLimit says a limit in words, as the config sets it.
func describeLimit(l ratelimit.Limit) string {
	switch l.Kind() {
	case ratelimit.KindRate:
		return fmt.Sprintf("%d per %s, burst %d", l.Count, shortDuration(l.Period), l.Burst)
	case ratelimit.KindCount:
		if l.Window == 0 {
			return fmt.Sprintf("at most %d at once", l.Max)
		}
		return fmt.Sprintf("%d per %s window", l.Max, shortDuration(l.Window))
	}
	return ""
}

// shortDuration prints 1h0m0s as 1h and 168h0m0s as 168h.
func shortDuration(d time.Duration) string {
	s := d.String()
	for _, suf := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, suf) {
			s = strings.TrimSuffix(s, "0s")
			s = strings.TrimSuffix(s, "0m")
		}
	}
	return s
}

// LimitView is one configured limit.
type LimitView struct {
	Limit    string `json:"limit"`
	Enabled  bool   `json:"enabled"`
	Kind     string `json:"kind"`
	Describe string `json:"describe"`
}

// OverrideView is one per-bucket override.
type OverrideView struct {
	Bucket   string `json:"bucket"`
	Describe string `json:"describe"`
}

// LimitsView is the limiter's configuration.
type LimitsView struct {
	Limits    []LimitView    `json:"limits"`
	Overrides []OverrideView `json:"overrides"`
}

// Limits describes the configured limits.
func (s *Server) Limits() LimitsView {
	cfg := s.cfg.Limits.Policy()
	var v LimitsView
	for _, n := range ratelimit.Names() {
		v.Limits = append(v.Limits, LimitView{Limit: n.String(), Enabled: cfg.Enabled[n], Kind: n.Kind().String(), Describe: describeLimit(cfg.Limits[n])})
	}
	for k, l := range cfg.Overrides {
		v.Overrides = append(v.Overrides, OverrideView{Bucket: k, Describe: describeLimit(l)})
	}
	slices.SortFunc(v.Overrides, func(a, b OverrideView) int { return strings.Compare(a.Bucket, b.Bucket) })
	return v
}
