// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"context"
	"fmt"
	"hash/maphash"
	"time"
)

// planMargin is how far back a refresh reads again what the one before
// it read: a certificate stored with an issue time (or a removal with a
// time) before that refresh began but committed only after it read, or
// written by a replica whose clock is behind, is read by the next one,
// as long as the delay or the skew is under planMargin. A store write
// times out well within it (storage: SQLite's busy timeout is 5 s); one
// later, or a larger skew, leaves that window (or removal) out of this
// replica's plan until the window's hours have passed or a rebuild.
const planMargin = time.Minute

// planFeed is what a refresh needs to take each change in the store once:
// which certificates are in the plan, which removals it has taken, and
// which changes were this process's own, which it made in the plan when
// it made them. Its maps hold what was issued or removed in the last
// planReload and 2·planMargin, not the fleet: they are let go as the
// refreshes move on.
type planFeed struct {
	seed maphash.Seed
	// gen counts the full rebuilds completed: an entry of seen from an
	// earlier one may not be in the state in use.
	gen  uint32
	seen map[uint64]seenCert // by serial (hash): placed here, or read by a refresh
	mine map[uint64]int64    // by serial: windows this process took out, when (Unix ns)
	// applied holds the removals taken, by ID and time.
	applied map[removalKey]struct{}
	// The next refresh reads the windows issued since from and the
	// removals since jfrom; seen holds every certificate issued since
	// seenFrom that the state in use has read or placed.
	from, jfrom, seenFrom time.Time
	builtEnd              time.Time // when the last rebuild put its state in place
	rcut                  time.Time // the cut of the rebuild running
	refreshing            bool
}

// seenCert is a certificate the planner placed or read: when it was
// placed or issued (Unix ns), in which generation of the state, and
// whether its window is counted there.
type seenCert struct {
	at      int64
	gen     uint32
	counted bool
}

// removalKey names a Removal: its ID, with its time, since a store
// may give an ID again once the removal that had it is deleted.
type removalKey struct{ id, at int64 }

func newPlanFeed() planFeed {
	return planFeed{seed: maphash.MakeSeed(), seen: map[uint64]seenCert{}, mine: map[uint64]int64{}, applied: map[removalKey]struct{}{}}
}

// hash is a serial's key in seen and mine.
func (f *planFeed) hash(serial string) uint64 { return maphash.String(f.seed, serial) }

// refreshStats is what a refresh read and took.
type refreshStats struct {
	issued, counted, removals, taken int
}

// refresh brings the plan up to date with the store: it counts the
// windows issued since the last refresh (or the cut of the last rebuild)
// that it has not counted or placed itself, then takes out the windows
// removed since that it still counts but did not take out itself, and
// lets the hours that have passed go. Its cost follows what was issued
// and removed since the last refresh, not the certificates the store
// holds; the windows come in pages, paced like a rebuild's (planYield),
// and no request waits for it. It fails when the store cannot be read,
// keeping what it took, and the next refresh reads again from where this
// one started.
func (p *Planner) refresh(ctx context.Context, inv Feed) (refreshStats, error) {
	var st refreshStats
	p.mu.Lock()
	if p.rebuilding || p.refreshing {
		p.mu.Unlock()
		return st, fmt.Errorf("renewal planner: a rebuild or a refresh is running")
	}
	p.refreshing = true
	now := p.now()
	from, jfrom := p.from, p.jfrom
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.refreshing = false
		p.mu.Unlock()
	}()
	if inv != nil {
		// The windows first: a removal committed before they are read is
		// then read too, below, with its window in seen.
		n, err := readAll(ctx, p.page, p.yield, func(ctx context.Context, after IssuedWindow) ([]IssuedWindow, error) {
			return inv.IssuedWindows(ctx, from, after, p.page)
		}, func(ws []IssuedWindow) {
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, w := range ws {
				if p.took(w, now) {
					st.counted++
				}
			}
		})
		st.issued = n
		if err != nil {
			return st, err
		}
		n, err = readAll(ctx, p.page, p.yield, func(ctx context.Context, after Removal) ([]Removal, error) {
			return inv.PlanRemovals(ctx, jfrom, after, p.page)
		}, func(rs []Removal) {
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, r := range rs {
				if p.dropped(r, now) {
					st.taken++
				}
			}
		})
		st.removals = n
		if err != nil {
			return st, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.trim(p.st.index(now))
	next := now.Add(-planMargin)
	p.from, p.jfrom = next, next
	p.prune(next.Add(-planMargin))
	return st, nil
}

// readAll reads pages of size with read, each after the last of the one
// before, waiting yield times as long as each took before the next,
// hands each to take and returns how many it read.
func readAll[T any](ctx context.Context, size, yield int, read func(context.Context, T) ([]T, error), take func([]T)) (int, error) {
	var after T
	n := 0
	for {
		t0 := time.Now()
		page, err := read(ctx, after)
		if err != nil {
			return n, fmt.Errorf("renewal planner: %w", err)
		}
		take(page)
		n += len(page)
		if len(page) < size {
			return n, nil
		}
		after = page[len(page)-1]
		if err := pause(ctx, time.Duration(yield)*time.Since(t0)); err != nil {
			return n, fmt.Errorf("renewal planner: %w", err)
		}
	}
}

// took counts the window of w unless the state already has it (placed
// here, or read before) and reports whether it did. A revoked
// certificate's window, or a moved one, is not counted; its removal then
// finds it so in seen. p.mu is held.
func (p *Planner) took(w IssuedWindow, now time.Time) bool {
	h := p.hash(w.Serial)
	if e, ok := p.seen[h]; ok && e.gen == p.gen {
		return false
	}
	counted := !w.Gone && w.End.After(now)
	if counted {
		p.st.add(w.AccountID, w.Start, w.End)
	}
	p.seen[h] = seenCert{at: w.IssuedAt.UnixNano(), gen: p.gen, counted: counted}
	return counted
}

// dropped takes the window of r out of the plan if the plan counts it,
// once, and reports whether it did. p.mu is held.
func (p *Planner) dropped(r Removal, now time.Time) bool {
	key := removalKey{r.ID, r.At.UnixNano()}
	if _, ok := p.applied[key]; ok {
		return false
	}
	p.applied[key] = struct{}{}
	h := p.hash(r.Serial)
	if _, ok := p.mine[h]; ok || !r.End.After(now) {
		return false // taken out here already, or its hours have passed
	}
	if !p.counts(r, h) {
		return false
	}
	p.st.remove(r.AccountID, r.Start, r.End)
	return true
}

// counts reports whether the state in use counts the window of r, and
// marks it no longer counted: this process's removal of the window, or
// another's (a Removal). p.mu is held.
func (p *Planner) counts(r Removal, h uint64) bool {
	if e, ok := p.seen[h]; ok && e.gen == p.gen {
		p.seen[h] = seenCert{at: e.at, gen: e.gen}
		return e.counted
	}
	switch {
	case !r.IssuedAt.Before(p.seenFrom):
		// Issued since seenFrom and not in seen: committed after this
		// refresh read the windows, so not read yet; when it is, the
		// window is gone already.
		p.seen[h] = seenCert{at: r.IssuedAt.UnixNano(), gen: p.gen}
		return false
	case !r.IssuedAt.Before(p.cut):
		// Read by a refresh since the rebuild, its entry let go since: it
		// was counted, as a window read gone has its removal taken in the
		// same refresh.
		return true
	}
	return p.rebuildSaw(r)
}

// prune lets go what no refresh will read again: the certificates issued,
// and the removals made, before below.
func (p *Planner) prune(below time.Time) {
	b := below.UnixNano()
	for h, e := range p.seen {
		if e.at < b {
			delete(p.seen, h)
		}
	}
	for h, at := range p.mine {
		if at < b {
			delete(p.mine, h)
		}
	}
	for k := range p.applied {
		if k.at < b {
			delete(p.applied, k)
		}
	}
	if below.After(p.seenFrom) {
		p.seenFrom = below
	}
	if below.After(p.builtEnd) {
		p.pages = nil
	}
}

// stale reports whether the plan needs a full rebuild: it has none, a
// certificate was issued with planning off since (lapsed), or the
// removals since its last refresh may have been let go.
func (p *Planner) stale() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.loaded || p.lapsed.Load() || p.now().Sub(p.jfrom) > RemovalsKept-planMargin
}

// drop lets the plan go while planning is off: the next update rebuilds
// it in full.
func (p *Planner) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rebuilding || p.refreshing || !p.loaded {
		return
	}
	p.st, p.loaded, p.pages = newPlanState(p.now(), p.unit), false, nil
	p.seenFrom, p.cut = time.Time{}, time.Time{}
	clear(p.seen)
	clear(p.mine)
	clear(p.applied)
}
