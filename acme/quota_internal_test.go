package acme

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// TestLimitOf: the RateLimit fields and problem members use the limit the
// limiter applied: the bucket's own override, else its EAB group's, else
// the default.
func TestLimitOf(t *testing.T) {
	def := ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}
	group := ratelimit.Limit{Count: 200, Period: time.Hour, Burst: 50}
	own := ratelimit.Limit{Count: 2, Period: time.Hour, Burst: 1}
	conf := ratelimit.Policy{
		Limits: map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: def},
		Overrides: map[string]ratelimit.Limit{
			"order-creation:eab:team-x": group,
			"order-creation:9":          own,
		},
	}
	d := func(key string) ratelimit.Decision {
		return ratelimit.Decision{Limit: ratelimit.OrderCreation, Key: key}
	}
	grouped := func(key string) []ratelimit.Request {
		return []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: key, OverrideKey: "eab:team-x"}}
	}
	for _, tc := range []struct {
		name string
		reqs []ratelimit.Request
		d    ratelimit.Decision
		want ratelimit.Limit
	}{
		{"default", []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: "7"}}, d("7"), def},
		{"EAB group", grouped("7"), d("7"), group},
		{"own override wins over the group", grouped("9"), d("9"), own},
		{"another bucket's group does not apply", grouped("8"), d("7"), def},
	} {
		if got := limitOf(conf, tc.reqs, tc.d); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
