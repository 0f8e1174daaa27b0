// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// planPage is how many windows a rebuild or a refresh reads at a time.
// The planner's lock is held only to sort out one page's windows (and to
// put a rebuilt state in place), never while a page is read.
const planPage = 2000

// planYield paces a rebuild and a refresh: after each page they wait
// planYield times as long as the page took to read and count, so that
// they use at most 1/(1+planYield) of a core on average and leave the
// rest to requests: at a million certificates a rebuild is about 2.6 s of
// CPU (CPU profile of the first 10 s after start), which unpaced took a
// whole core beside the first requests.
const planYield = 1

// pageMark is when a rebuild read a page: from at, the windows up to last.
type pageMark struct {
	at   time.Time
	last Window
}

// added records the window placed for serial. p.mu is held.
func (p *Planner) added(serial string, account string, start, end time.Time) {
	p.st.add(account, start, end)
	p.seen[p.hash(serial)] = seenCert{at: p.now().UnixNano(), gen: p.gen, counted: true}
	if p.rebuilding {
		p.placed[serial] = Window{Serial: serial, AccountID: account, Start: start, End: end}
	}
}

// removed takes back the window w of a certificate issued at issued
// (revoked, or its window moved into the past) if the plan counts it,
// and remembers that this process did, so that its Removal is not
// taken again. p.mu is held. While a rebuild runs, the window is taken
// out of the state being built too (when it goes in place) if it is
// there: placed during the rebuild, or in a page already sorted out. A
// page read just after the revocation was stored and sorted out just
// before this call did not hold it; then the rebuilt state undercounts
// that one window.
func (p *Planner) removed(w Window, issued time.Time) {
	now := p.now()
	if !w.End.After(now) {
		return // a window that has passed (one moved already) is in no plan
	}
	h := p.hash(w.Serial)
	if p.counts(Removal{At: now, IssuedAt: issued, Window: w}, h) {
		p.st.remove(w.AccountID, w.Start, w.End)
	}
	p.mine[h] = now.UnixNano()
	if !p.rebuilding {
		return
	}
	if _, ok := p.placed[w.Serial]; ok {
		delete(p.placed, w.Serial)
		return
	}
	if !issued.Before(p.rcut) {
		return // the rebuild does not read it; the refresh after it does
	}
	if !p.cursor.Before(w) {
		p.undo = append(p.undo, w)
	}
	p.gone[w.Serial] = true
}

// forget takes back the window placed for a certificate issued at issued
// that was not stored after all. p.mu is held.
func (p *Planner) forget(w Window, issued time.Time) {
	h := p.hash(w.Serial)
	if p.counts(Removal{At: p.now(), IssuedAt: issued, Window: w}, h) {
		p.st.remove(w.AccountID, w.Start, w.End)
	}
	delete(p.seen, h) // if it was stored after all, a refresh counts it
	if p.rebuilding {
		delete(p.placed, w.Serial)
	}
}

// rebuild reads the promised windows (the unrevoked certificates'
// windows that end after now) of the certificates issued before its cut,
// planMargin before it starts, page by page into a new state, and then
// puts it in place of the one in use, with what was placed and removed
// meanwhile, so that nothing waits for it. What was issued since the cut
// is the next refresh's, which reads from there (delta.go). It fails,
// keeping the state in use, when the store cannot be read, or when
// another rebuild or a refresh is running. It returns the number of
// windows it read.
func (p *Planner) rebuild(ctx context.Context, inv Feed) (int, error) {
	p.mu.Lock()
	if p.rebuilding || p.refreshing {
		p.mu.Unlock()
		return 0, fmt.Errorf("renewal planner: a rebuild or a refresh is running")
	}
	p.lapsed.Store(false) // what is issued with planning off from here on sets it again
	start := p.now()
	cut := start.Add(-planMargin)
	p.rebuilding, p.rcut, p.cursor, p.placed, p.gone, p.undo = true, cut, Window{}, map[string]Window{}, map[string]bool{}, nil
	unit := p.unit
	p.mu.Unlock()
	next := newPlanState(start, unit)
	n, marks, err := p.readPages(ctx, inv, start, cut, next)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		for _, w := range p.placed {
			next.add(w.AccountID, w.Start, w.End)
		}
		for _, w := range p.undo {
			next.remove(w.AccountID, w.Start, w.End)
		}
		p.st, p.loaded = next, true
		// What this process placed before the rebuild is not in the new
		// state unless the rebuild read it: a new generation, but for
		// what it placed during the rebuild.
		p.gen++
		for serial := range p.placed {
			h := p.hash(serial)
			if e, ok := p.seen[h]; ok {
				e.gen = p.gen
				p.seen[h] = e
			}
		}
		p.cut, p.builtAt, p.builtEnd, p.pages = cut, start, p.now(), marks
		p.from, p.jfrom, p.seenFrom = cut, start, cut
	}
	p.rebuilding, p.cursor, p.placed, p.gone, p.undo = false, Window{}, nil, nil, nil
	return n, err
}

// readPages counts every promised window of the certificates issued
// before cut into next, but those removed since the rebuild started,
// which rebuild sees to (what is placed since was issued after cut), and
// returns when it read each page.
func (p *Planner) readPages(ctx context.Context, inv Feed, now, cut time.Time, next *planState) (int, []pageMark, error) {
	if inv == nil {
		return 0, nil, nil
	}
	var (
		from  Window
		marks []pageMark
	)
	n := 0
	for {
		t0, at := time.Now(), p.now()
		ws, err := inv.RenewalWindows(ctx, now, cut, from, p.page)
		if err != nil {
			return n, nil, fmt.Errorf("renewal planner: %w", err)
		}
		n += len(ws)
		keep := ws[:0]
		p.mu.Lock()
		for _, w := range ws {
			if !p.gone[w.Serial] {
				keep = append(keep, w)
			}
		}
		if len(ws) > 0 {
			from = ws[len(ws)-1]
			p.cursor = from
		}
		p.mu.Unlock()
		marks = append(marks, pageMark{at: at, last: from})
		for _, w := range keep {
			next.add(w.AccountID, w.Start, w.End)
		}
		if len(ws) < p.page {
			return n, marks, nil
		}
		if err := pause(ctx, time.Duration(p.yield)*time.Since(t0)); err != nil {
			return n, nil, fmt.Errorf("renewal planner: %w", err)
		}
	}
}

// rebuildSaw reports whether the last rebuild counted the window of r,
// a certificate issued before its cut: it did unless the window was
// taken out before the rebuild read its page, the page whose last window
// is the first not before r's. A removal whose time is after that page's
// read began was not in what the read saw. One with an earlier time but
// committed only after the read began was not either, and the window then
// stays counted: that is the store's commit latency, some milliseconds,
// only for another replica's removals while a rebuild runs.
func (p *Planner) rebuildSaw(r Removal) bool {
	switch {
	case !r.End.After(p.builtAt):
		return false // not a promised window when the rebuild read
	case r.ID == 0 || r.At.After(p.builtEnd):
		// This process's own removal (no ID), which comes after every
		// page the last completed rebuild read, or one made after it.
		return true
	case len(p.pages) == 0:
		return false
	}
	w := r.Window
	m := p.pages[len(p.pages)-1]
	for _, pm := range p.pages {
		if !pm.last.Before(w) {
			m = pm
			break
		}
	}
	return r.At.After(m.at)
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Run brings the plan up to date wait after it is called and every
// planReload while on reports planning on, until ctx ends: a full rebuild
// the first time, then refreshes (update) from inv, or from nothing but
// the passing hours when inv is a SoleWriter that is. Until the first
// rebuild is done the planner places on what it knows (the windows it
// placed itself), as it does during any rebuild; the windows ARI answers
// are those stored with each certificate, which no rebuild changes.
// While planning is off the plan is dropped, and rebuilt when it is on
// again.
func (p *Planner) Run(ctx context.Context, wait time.Duration, on func() bool, inv Feed, log *slog.Logger) {
	if pause(ctx, wait) != nil {
		return
	}
	tick := time.NewTicker(planReload)
	defer tick.Stop()
	for {
		if on() {
			feed := inv
			if sw, ok := inv.(SoleWriter); ok && sw.SoleWriter() {
				feed = nil // every change was this process's own
			}
			p.update(ctx, inv, feed, log)
		} else {
			p.drop()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// update rebuilds the plan in full from inv if it has none, or if the
// removals a refresh would need may have been let go (RemovalsKept),
// and then refreshes it from feed (nil for a store only this process
// writes: SoleWriter). Failures are logged; the plan in use is kept.
func (p *Planner) update(ctx context.Context, inv, feed Feed, log *slog.Logger) {
	if p.stale() {
		t0 := time.Now()
		n, err := p.rebuild(ctx, inv)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("renewal planner: rebuild failed; placing on the plan as it is", "err", err)
			}
			return
		}
		log.Debug("renewal planner: rebuilt", "windows", n, "took", time.Since(t0))
		feed = inv // what was issued since the rebuild's cut is read in any case
	}
	t0 := time.Now()
	st, err := p.refresh(ctx, feed)
	switch {
	case err == nil:
		log.Debug("renewal planner: refreshed", "issued", st.issued, "counted", st.counted,
			"removals", st.removals, "taken", st.taken, "took", time.Since(t0))
	case ctx.Err() == nil:
		log.Warn("renewal planner: refresh failed; placing on the plan as it is", "err", err)
	}
}
