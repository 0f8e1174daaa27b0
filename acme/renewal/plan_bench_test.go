// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPlannerPlace: placing one certificate's window (the planner's
// update per issuance) on a plan that already holds 100,000 windows of
// 2,000 accounts, against the ceiling and the account's headroom.
func BenchmarkPlannerPlace(b *testing.B) { benchPlace(b, 5000) }

// BenchmarkPlannerPlaceFull: the same on a plan past its target in every
// hour (a ceiling of 10 an hour), where every start of the range is read:
// a million windows under the default ceiling are that.
func BenchmarkPlannerPlaceFull(b *testing.B) { benchPlace(b, 10) }

func benchPlace(b *testing.B, ceiling int) {
	cfg := Config{MaxRenewalsPerHour: ceiling}
	cfg.SetDefaults()
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	const life = 90 * 24 * time.Hour
	p := NewPlanner(nil)
	for i := range 100_000 {
		nb := t0.Add(time.Duration(i) * time.Minute)
		p.place(cfg, fmt.Sprintf("%x", i), fmt.Sprint(i%2000), 1, nb, nb.Add(life), 40)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		nb := t0.Add(time.Duration(100_000+i%10000) * time.Minute)
		p.place(cfg, "", fmt.Sprint(i%2000), 1, nb, nb.Add(life), 40)
	}
}

// BenchmarkPlanStateAdd: what a rebuild does per promised window once the
// store has read it, counting it into the CA's and its account's hours
// (100,000 windows of two days over 2,000 accounts per op).
func BenchmarkPlanStateAdd(b *testing.B) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 100_000
	accts := make([]string, 2000)
	for i := range accts {
		accts[i] = fmt.Sprint(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		st := newPlanState(time.Unix(0, 0), time.Hour)
		for i := range n {
			s := t0.Add(time.Duration(i) * 26 * time.Second)
			st.add(accts[i%len(accts)], s, s.Add(48*time.Hour))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/window")
}

// BenchmarkPlannerRefresh: what a refresh does per window another
// replica issued once the store has read it (took: the serial looked up,
// the window counted and remembered), on a plan of 2,000 accounts, and
// the prune of those entries that the refresh after next does.
func BenchmarkPlannerRefresh(b *testing.B) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 100_000
	ws := make([]IssuedWindow, n)
	for i := range ws {
		s := t0.Add(60*24*time.Hour + time.Duration(i)*26*time.Second)
		ws[i] = IssuedWindow{Window: Window{Serial: fmt.Sprintf("%036x", i), AccountID: fmt.Sprint(i % 2000),
			Start: s, End: s.Add(48 * time.Hour)}, IssuedAt: t0.Add(time.Duration(i) * time.Millisecond)}
	}
	b.ReportAllocs()
	for b.Loop() {
		p := NewPlanner(func() time.Time { return t0 })
		for _, w := range ws {
			p.took(w, t0)
		}
		p.prune(t0.Add(time.Hour))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/window")
}
