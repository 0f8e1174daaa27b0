// SPDX-License-Identifier: Apache-2.0

// What the fleet measures, minute by minute: the events the clients
// record (issuances, renewals, 429s by limit, lapses, errors) and the
// gauges the watcher samples every second (clients on A and on B,
// expired certificates).

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// fleetMinute is one minute of the run, counted from its start.
type fleetMinute struct {
	Minute  int    `json:"minute"`
	Seconds int    `json:"seconds"` // covered: 60 but for the last minute
	Phase   string `json:"phase"`   // the phases the minute saw
	// Gauges, at the end of the minute.
	OnA     int `json:"on_a"`
	OnB     int `json:"on_b"`
	Expired int `json:"expired"` // clients whose certificate in hand has expired
	// Events within the minute.
	Issued            int            `json:"issued"` // first certificates
	Renewals          int            `json:"renewals"`
	RenewalsToB       int            `json:"renewals_to_b"`
	MovedAToB         int            `json:"moved_a_to_b"` // renewals replacing a certificate of A by one of B
	CertsPerMin       int            `json:"certs"`        // issued + renewals
	Polls             int            `json:"ari_polls"`
	Limited           map[string]int `json:"rate_limited,omitempty"` // 429s by the limit they name
	LimitedPastExpiry int            `json:"rate_limited_past_expiry"`
	Lapsed            int            `json:"lapsed"`
	Errors            int            `json:"errors"`
	AlreadyReplaced   int            `json:"already_replaced,omitempty"`
	// weir's own count (GET /api/v1/ca/migration) of the certificates
	// of A still to renew, just after the minute; absent when it did not
	// answer.
	WeirARemaining *int64 `json:"weir_a_remaining,omitempty"`
}

// fleetStats holds the minutes; every method is safe for concurrent use.
type fleetStats struct {
	start time.Time

	mu       sync.Mutex
	rows     []*fleetMinute
	phase    string
	errKinds map[string]int
	notes    []string
	dropped  int   // notes beyond maxNotes
	perSec   []int // certificates (first and renewed) by second of the run
	renSec   []int // renewals by second of the run
}

// maxNotes bounds the notes kept (refusals past expiry, one each).
const maxNotes = 10

func newFleetStats(start time.Time, phase string) *fleetStats {
	return &fleetStats{start: start, phase: phase, errKinds: map[string]int{}}
}

// rowAt is the minute of t, made (with the ones before it) if need be;
// s.mu is held.
func (s *fleetStats) rowAt(t time.Time) *fleetMinute {
	i := max(0, int(t.Sub(s.start)/time.Minute))
	for len(s.rows) <= i {
		s.rows = append(s.rows, &fleetMinute{Minute: len(s.rows), Seconds: 60, Phase: s.phase})
	}
	return s.rows[i]
}

// add records an event in the current minute.
func (s *fleetStats) add(f func(m *fleetMinute)) {
	s.mu.Lock()
	f(s.rowAt(time.Now()))
	s.mu.Unlock()
}

// setPhase starts a phase of the run (ramp, steady, step1, ...).
func (s *fleetStats) setPhase(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = p
	m := s.rowAt(time.Now())
	if m.Phase == "" || m.Phase == p {
		m.Phase = p
	} else if !strings.HasSuffix(m.Phase, ">"+p) {
		m.Phase += ">" + p
	}
}

// cert counts a certificate obtained now (a renewal or a first one), for
// the peak rates.
func (s *fleetStats) cert(renewal bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := max(0, int(time.Since(s.start)/time.Second))
	for len(s.perSec) <= i {
		s.perSec = append(s.perSec, 0)
		s.renSec = append(s.renSec, 0)
	}
	s.perSec[i]++
	if renewal {
		s.renSec[i]++
	}
}

// peaks are the most certificates, and the most renewals, obtained in
// any 60 seconds of the run, with the second each window starts at.
func (s *fleetStats) peaks() (certs, certsAt, renewals, renewalsAt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	certs, certsAt = slidingPeak(s.perSec)
	renewals, renewalsAt = slidingPeak(s.renSec)
	return
}

// slidingPeak is the largest sum of 60 consecutive counts and where it
// starts.
func slidingPeak(counts []int) (most, at int) {
	sum := 0
	for i, n := range counts {
		sum += n
		if i >= 60 {
			sum -= counts[i-60]
		}
		if sum > most {
			most, at = sum, max(0, i-59)
		}
	}
	return most, at
}

func (s *fleetStats) errKind(k string) {
	s.mu.Lock()
	s.errKinds[k]++
	s.mu.Unlock()
}

// note keeps a line for the summary (at most maxNotes).
func (s *fleetStats) note(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notes) < maxNotes {
		s.notes = append(s.notes, time.Now().UTC().Format(time.TimeOnly)+" "+line)
	} else {
		s.dropped++
	}
}

// setWeirRemaining records weir's count of A's certificates still to
// renew for a minute.
func (s *fleetStats) setWeirRemaining(minute int, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if minute < len(s.rows) {
		s.rows[minute].WeirARemaining = &n
	}
}

// gauges sets the current minute's gauges.
func (s *fleetStats) gauges(now time.Time, onA, onB, expired int) *fleetMinute {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.rowAt(now)
	m.OnA, m.OnB, m.Expired = onA, onB, expired
	return m
}

// snapshot copies the minutes, the last one covering up to end, and the
// error kinds and notes.
func (s *fleetStats) snapshot(end time.Time) ([]fleetMinute, map[string]int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rowAt(end)
	rows := make([]fleetMinute, len(s.rows))
	for i, r := range s.rows {
		rows[i] = *r
		rows[i].Limited = maps.Clone(r.Limited)
		if r.WeirARemaining != nil {
			n := *r.WeirARemaining
			rows[i].WeirARemaining = &n
		}
		rows[i].CertsPerMin = r.Issued + r.Renewals
	}
	if n := len(rows); n > 0 {
		secs := int(end.Sub(s.start.Add(time.Duration(n-1)*time.Minute)) / time.Second)
		rows[n-1].Seconds = min(60, max(1, secs))
	}
	notes := slices.Clone(s.notes)
	if s.dropped > 0 {
		notes = append(notes, fmt.Sprintf("(%d more not kept)", s.dropped))
	}
	return rows, maps.Clone(s.errKinds), notes
}

// limitedString is "san-budget 3, order-creation 1", or "-".
func limitedString(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// logMinute prints a finished minute as a progress line.
func logMinute(w io.Writer, m fleetMinute) {
	logf(w, "minute %d (%s): on A %d, on B %d, expired %d; issued %d, renewals %d (to B %d), 429s %s (past expiry %d), lapsed %d, errors %d, ARI polls %d",
		m.Minute, m.Phase, m.OnA, m.OnB, m.Expired, m.Issued, m.Renewals, m.RenewalsToB, limitedString(m.Limited), m.LimitedPastExpiry, m.Lapsed, m.Errors, m.Polls)
}
