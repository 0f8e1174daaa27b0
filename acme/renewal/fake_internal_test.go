// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// planStore is a Feed of what the renewal planner reads, held in
// memory and written as the stores write it: a certificate is read once
// its issuance commits (visible), and a revocation or a move records the
// window it takes out in the same step (Removal). onRead, when set,
// runs after each page is read and before the planner sorts it out, as
// requests running alongside would; reads counts the pages read.
type planStore struct {
	mu      sync.Mutex
	clock   *planClock
	certs   map[string]*planCert
	removed []Removal
	lastID  int64
	err     error
	reads   int
	onRead  func(n int)
}

// planCert is a certificate of a planStore.
type planCert struct {
	w       Window // as stored now (moved: in the past)
	issued  time.Time
	visible time.Time // when its issuance commits
	revoked bool
	moved   bool
}

// planClock is a clock the tests move. Like a real clock it never tells
// the same time twice: each reading moves it on by a nanosecond, so that
// of two things done one after the other the first has the earlier time.
type planClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *planClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Nanosecond)
	return c.t
}

func (c *planClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

func newPlanStore(c *planClock) *planStore {
	return &planStore{clock: c, certs: map[string]*planCert{}}
}

// put stores the certificate of w issued now, its issuance committing
// after latency.
func (s *planStore) put(w Window, latency time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.now()
	s.certs[w.Serial] = &planCert{w: w, issued: now, visible: now.Add(latency)}
}

// take records the removal of c's window at now if it ends after now.
// s.mu is held.
func (s *planStore) take(c *planCert, now time.Time) {
	if c.w.End.After(now) {
		s.lastID++
		s.removed = append(s.removed, Removal{ID: s.lastID, At: now, IssuedAt: c.issued, Window: c.w})
	}
}

// revoke revokes serial now, if it is stored, and returns its window
// and issue time.
func (s *planStore) revoke(serial string) (Window, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.certs[serial]
	if c == nil || c.revoked || c.visible.After(s.clock.now()) {
		return Window{}, time.Time{}, false
	}
	s.take(c, s.clock.now())
	c.revoked = true
	return c.w, c.issued, true
}

// renewNow moves serial's window into the past now, as incident mode
// does, and returns the window it had.
func (s *planStore) renewNow(serial string) (Window, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.certs[serial]
	if c == nil || c.revoked || c.moved || c.visible.After(s.clock.now()) {
		return Window{}, time.Time{}, false
	}
	now := s.clock.now()
	s.take(c, now)
	old := c.w
	c.w.Start, c.w.End = now.Add(-2*time.Hour), now.Add(-time.Hour) // in the past, as acme moves it
	c.moved = true
	return old, c.issued, true
}

// read runs before a page is read: the error, if any, and the count.
func (s *planStore) read() (int, error) {
	s.reads++
	return s.reads, s.err
}

// after runs onRead, outside s.mu.
func (s *planStore) after(n int) {
	if s.onRead != nil {
		s.onRead(n)
	}
}

// page returns at most limit of xs after from in the order before gives.
func page[T any](xs []T, before func(a, b T) bool, from T, limit int) []T {
	slices.SortFunc(xs, func(a, b T) int {
		switch {
		case before(a, b):
			return -1
		case before(b, a):
			return 1
		}
		return 0
	})
	var out []T
	for _, x := range xs {
		if before(from, x) && (limit <= 0 || len(out) < limit) {
			out = append(out, x)
		}
	}
	return out
}

func (s *planStore) RenewalWindows(_ context.Context, after, before time.Time, from Window, limit int) ([]Window, error) {
	s.mu.Lock()
	n, err := s.read()
	var ws []Window
	now := s.clock.now()
	for _, c := range s.certs {
		if !c.visible.After(now) && !c.revoked && c.w.End.After(after) && (before.IsZero() || c.issued.Before(before)) {
			ws = append(ws, c.w)
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ws = page(ws, Window.Before, from, limit)
	s.after(n)
	return ws, nil
}

func (s *planStore) IssuedWindows(_ context.Context, since time.Time, from IssuedWindow, limit int) ([]IssuedWindow, error) {
	s.mu.Lock()
	n, err := s.read()
	var ws []IssuedWindow
	now := s.clock.now()
	for _, c := range s.certs {
		if !c.visible.After(now) && !c.issued.Before(since) {
			ws = append(ws, IssuedWindow{Window: c.w, IssuedAt: c.issued, Gone: c.revoked || c.moved})
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ws = page(ws, IssuedWindow.Before, from, limit)
	s.after(n)
	return ws, nil
}

func (s *planStore) PlanRemovals(_ context.Context, since time.Time, from Removal, limit int) ([]Removal, error) {
	s.mu.Lock()
	n, err := s.read()
	var rs []Removal
	for _, r := range s.removed {
		if !r.At.Before(since) {
			rs = append(rs, r)
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	rs = page(rs, Removal.Before, from, limit)
	s.after(n)
	return rs, nil
}

// truth is the plan the store's promised windows make at now: what every
// planner's should be once it has refreshed.
func (s *planStore) truth(now time.Time) *planState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := newPlanState(now, time.Hour)
	for _, c := range s.certs {
		if !c.visible.After(now) && !c.revoked && !c.moved && c.w.End.After(now) {
			st.add(c.w.AccountID, c.w.Start, c.w.End)
		}
	}
	return st
}

// planReplica is one process's planner on a shared planStore, issuing
// and revoking as the Service does: a window is placed before its
// certificate is stored, and taken out after its revocation is.
type planReplica struct {
	p   *Planner
	s   *planStore
	cfg Config
}

func newPlanReplica(s *planStore) *planReplica {
	cfg := Config{MaxRenewalsPerHour: 10, WindowWidth: 2 * time.Hour}
	cfg.SetDefaults()
	p := NewPlanner(s.clock.now)
	p.yield = 0 // the tests' pages are read at once
	return &planReplica{p: p, s: s, cfg: cfg}
}

// issue places and stores a certificate of account valid for life from
// now, committing after latency.
func (r *planReplica) issue(serial string, account string, life, latency time.Duration) {
	nb := r.s.clock.now()
	r.p.mu.Lock()
	start, end := r.p.place(r.cfg, serial, account, 1, nb, nb.Add(life), 4)
	r.p.mu.Unlock()
	r.s.put(Window{Serial: serial, AccountID: account, Start: start, End: end}, latency)
}

// revoke revokes serial and takes its window out of the plan.
func (r *planReplica) revoke(serial string) {
	if w, issued, ok := r.s.revoke(serial); ok {
		r.p.mu.Lock()
		r.p.removed(w, issued)
		r.p.mu.Unlock()
	}
}

// renewNow moves serial's window into the past and out of the plan.
func (r *planReplica) renewNow(serial string) {
	if w, issued, ok := r.s.renewNow(serial); ok {
		r.p.mu.Lock()
		r.p.removed(w, issued)
		r.p.mu.Unlock()
	}
}

var errStoreDown = errors.New("store down")
