// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

var activityT0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// denyEvent is the i-th denied new-order of a test: key "k<i>", decided
// at activityT0 + i seconds.
func denyEvent(i int) acme.LimiterEvent {
	d := ratelimit.Decision{Limit: ratelimit.OrderCreation, Key: fmt.Sprintf("k%d", i),
		RetryAfter: time.Duration(i+1) * time.Second, Remaining: 0, At: activityT0.Add(time.Duration(i) * time.Second)}
	d.Denied = []ratelimit.Decision{d}
	return acme.LimiterEvent{Action: "new-order", Requests: []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: d.Key}}, Decision: d}
}

// touchEvent is an allowed spend of the bucket order-creation:key.
func touchEvent(key string, at time.Time) acme.LimiterEvent {
	return acme.LimiterEvent{Action: "new-order", Requests: []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: key}},
		Decision: ratelimit.Decision{Allowed: true, Limit: ratelimit.OrderCreation, Key: key, Remaining: 1, At: at}}
}

func TestRecent429s(t *testing.T) {
	tests := []struct {
		pushed, n int
		want      []int // the i of each returned denial, in order
	}{
		{pushed: 0, n: 10, want: []int{}},
		{pushed: 3, n: 0, want: []int{2, 1, 0}},
		{pushed: 3, n: 2, want: []int{2, 1}},
		{pushed: 3, n: 10, want: []int{2, 1, 0}},
		{pushed: 256, n: 1, want: []int{255}},
		{pushed: 300, n: 3, want: []int{299, 298, 297}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("pushed=%d,n=%d", tt.pushed, tt.n), func(t *testing.T) {
			m := NewMetrics(MetricsOptions{})
			for i := range tt.pushed {
				m.Limiter(denyEvent(i))
			}
			var got []int
			for _, d := range m.Recent429s(tt.n) {
				var i int
				fmt.Sscanf(d.Key, "k%d", &i)
				got = append(got, i)
			}
			if got == nil {
				got = []int{}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Recent429s(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestRecent429sBoundAndFields(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	for i := range 1000 {
		m.Limiter(denyEvent(i))
	}
	all := m.Recent429s(0)
	if len(all) != recentDenials {
		t.Fatalf("kept %d denials, want %d", len(all), recentDenials)
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].At.After(all[i].At) {
			t.Fatalf("denials %d and %d are not newest first: %v, %v", i-1, i, all[i-1].At, all[i].At)
		}
	}
	got := all[0]
	want := Denial{At: activityT0.Add(999 * time.Second), Action: "new-order", Limit: "order-creation", Key: "k999",
		RetryAfter: 1000 * time.Second, Remaining: 0, Denied: 1}
	if got != want {
		t.Errorf("newest denial = %+v, want %+v", got, want)
	}
	if got, want := m.DenialsByLimit(), map[string]uint64{"order-creation": 1000}; !maps.Equal(got, want) {
		t.Errorf("DenialsByLimit = %v, want %v", got, want)
	}
}

func TestHotKeysOrder(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	// a: 3 hits, b: 2, c: 2 but touched last, d: 1.
	for i, k := range []string{"a", "b", "a", "d", "b", "a", "c", "c"} {
		m.Limiter(touchEvent(k, activityT0.Add(time.Duration(i)*time.Second)))
	}
	tests := []struct {
		n    int
		want []string
	}{
		{0, []string{"a:3", "c:2", "b:2", "d:1"}},
		{2, []string{"a:3", "c:2"}},
		{9, []string{"a:3", "c:2", "b:2", "d:1"}},
	}
	for _, tt := range tests {
		var got []string
		for _, h := range m.HotKeys(tt.n) {
			if h.Limit != "order-creation" {
				t.Errorf("hot key %+v: limit %q, want order-creation", h, h.Limit)
			}
			got = append(got, fmt.Sprintf("%s:%d", h.Key, h.Hits))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("HotKeys(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	if h := m.HotKeys(1)[0]; !h.Last.Equal(activityT0.Add(5 * time.Second)) {
		t.Errorf("a last touched %v, want %v", h.Last, activityT0.Add(5*time.Second))
	}
}

func TestHotKeysEvictLeastRecent(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	// "keep" is touched often early on, then 1100 new keys arrive; "keep"
	// is touched again half way, so it is recent and survives, while the
	// first keys, never touched again, are evicted.
	for range 5 {
		m.Limiter(touchEvent("keep", activityT0))
	}
	for i := range 1100 {
		if i == 600 {
			m.Limiter(touchEvent("keep", activityT0.Add(time.Hour)))
		}
		m.Limiter(touchEvent(fmt.Sprintf("n%04d", i), activityT0.Add(time.Duration(i)*time.Millisecond)))
	}
	all := m.HotKeys(0)
	if len(all) != hotKeyLimit {
		t.Fatalf("hot set holds %d keys, want %d", len(all), hotKeyLimit)
	}
	keys := map[string]uint64{}
	for _, h := range all {
		keys[h.Key] = h.Hits
	}
	if keys["keep"] != 6 || all[0].Key != "keep" {
		t.Errorf("keep: hits %d, first %q; want 6 hits and first", keys["keep"], all[0].Key)
	}
	// 1101 keys were inserted into 1024 slots: the 77 least recent go.
	for i := range 1100 {
		k := fmt.Sprintf("n%04d", i)
		_, kept := keys[k]
		if wantKept := i >= 77; kept != wantKept {
			t.Errorf("%s kept = %v, want %v", k, kept, wantKept)
		}
	}
}

func TestActivityConcurrent(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				m.Limiter(denyEvent(g*1000 + i))
				m.Limiter(touchEvent(fmt.Sprintf("g%d-%d", g, i%300), activityT0))
				if i%50 == 0 {
					_ = m.Recent429s(10)
					_ = m.HotKeys(10)
					_ = m.DenialsByLimit()
				}
			}
		})
	}
	wg.Wait()
	if got := len(m.Recent429s(0)); got != recentDenials {
		t.Errorf("Recent429s: %d, want %d", got, recentDenials)
	}
	if got := m.DenialsByLimit()["order-creation"]; got != 4000 {
		t.Errorf("denials = %d, want 4000", got)
	}
	if got := len(m.HotKeys(0)); got != hotKeyLimit {
		t.Errorf("hot keys: %d, want %d", got, hotKeyLimit)
	}
}
