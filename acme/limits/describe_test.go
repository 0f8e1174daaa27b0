// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// TestLimitDescribedOnce: a rateLimited problem's members describe a
// limit as the RateLimit-Policy field does (quota = q, window = w), with
// its configured rate beside it, for every kind of limit.
func TestLimitDescribedOnce(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		l                            ratelimit.Limit
		quota, window, count, period int64
	}{
		{"order-creation 20/h burst 5", ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}, 5, 900, 20, 3600},
		{"san-budget 100/h burst 100", ratelimit.Limit{Count: 100, Period: time.Hour, Burst: 100}, 100, 3600, 100, 3600},
		{"global 200/min burst 20", ratelimit.Limit{Count: 200, Period: time.Minute, Burst: 20}, 20, 6, 200, 60},
		{"sub-second refill", ratelimit.Limit{Count: 1000, Period: time.Second, Burst: 1}, 1, 1, 1000, 1},
		{"duplicate-certificate 4 per 72h", ratelimit.Limit{Max: 4, Window: 72 * time.Hour}, 4, 259200, 0, 0},
		{"pending-authorizations 30", ratelimit.Limit{Max: 30}, 30, 0, 0, 0},
	} {
		d := ratelimit.Decision{Limit: ratelimit.OrderCreation, Key: "12", Policy: tc.l, RetryAfter: time.Minute}
		info := rateLimitInfo(d)
		q := QuotaFromDecision(d)
		if info.Quota != q.Capacity || info.Window != q.WindowSeconds() || info.Count != q.Count || info.Period != q.PeriodSeconds() {
			t.Errorf("%s: members %+v disagree with the policy %+v", tc.name, info, q)
		}
		if info.Quota != tc.quota || info.Window != tc.window || info.Count != tc.count || info.Period != tc.period {
			t.Errorf("%s: quota %d window %d count %d period %d, want %d %d %d %d", tc.name,
				info.Quota, info.Window, info.Count, info.Period, tc.quota, tc.window, tc.count, tc.period)
		}
	}
}
