package acme

import (
	"context"
	"fmt"
	"time"
)

// planPage is how many promised windows a rebuild reads at a time. The
// planner's lock is held only to sort out one page's windows (and to put
// the new state in place), never while a page is read or counted.
const planPage = 2000

// planYield paces a rebuild: after each page it waits planYield times as
// long as the page took to read and count, so that a rebuild (at start,
// and every planReload) uses at most 1/(1+planYield) of a core on
// average and leaves the rest to requests: at a million certificates a
// rebuild is about 2.6 s of CPU (CPU profile of the first 10 s after
// start), which unpaced took a whole core beside the first requests.
const planYield = 1

// planSpread is how long a periodic rebuild (every planReload, not the
// one at start) spreads itself over: it paces its pages so that, at the
// size the previous rebuild read, it finishes no sooner than this. At a
// million certificates a rebuild is about 2.6 s of CPU: unspread it took
// half a core for 6 to 24 s under load, and the issuance p99 at c8 on two
// cores rose with it; spread over 30 s it is under a tenth of a core.
// Spread over 150 s it cost more than it saved: 5.2 to 5.4 ms of server
// CPU per certificate across the refresh against 4.3 and 4.7 without. The
// state being built (12 MiB at a million certificates) lives beside the
// one in use for the whole spread, and under the soft memory limit
// (cmd/weir/gc.go) a larger live heap makes the collector run sooner,
// the likely cause. The plan is at most planReload+planSpread old.
const planSpread = 30 * time.Second

// added records the window placed for serial. p.mu is held.
func (p *planner) added(serial string, account AccountID, start, end time.Time) {
	p.st.add(account, start, end)
	if p.rebuilding {
		p.placed[serial] = RenewalWindow{Serial: serial, AccountID: account, Start: start, End: end}
	}
}

// removed takes back the window of serial (revoked, or moved into the
// past). p.mu is held. While a rebuild runs, the window is taken out of
// the state being built too (when it goes in place) if it is there:
// placed during the rebuild, or in a page already sorted out. A page read
// just before the revocation was stored and sorted out just before this
// call may not have held it; then the rebuilt state undercounts that one
// window until the next rebuild.
func (p *planner) removed(serial string, account AccountID, start, end time.Time) {
	p.st.remove(account, start, end)
	if !p.rebuilding {
		return
	}
	w := RenewalWindow{Serial: serial, AccountID: account, Start: start, End: end}
	if _, ok := p.placed[serial]; ok {
		delete(p.placed, serial)
	} else if !p.cursor.Before(w) {
		p.undo = append(p.undo, w)
	}
	p.gone[serial] = true
}

// rebuild reads the promised windows (the unrevoked certificates' windows
// that end after now) page by page into a new state and then puts it in
// place of the one in use, with what was placed and removed meanwhile,
// so that nothing waits for it. It fails, keeping the state in use, when
// the store cannot be read, or when another rebuild is running.
func (p *planner) rebuild(ctx context.Context, inv Inventory, now time.Time) error {
	_, err := p.rebuildCount(ctx, inv, now, 0)
	return err
}

// rebuildCount is rebuild, paced to take at least spread (pacer),
// and returns the number of windows it read.
func (p *planner) rebuildCount(ctx context.Context, inv Inventory, now time.Time, spread time.Duration) (int, error) {
	p.mu.Lock()
	if p.rebuilding {
		p.mu.Unlock()
		return 0, fmt.Errorf("renewal planner: a rebuild is running")
	}
	p.rebuilding, p.cursor, p.placed, p.gone, p.undo = true, RenewalWindow{}, map[string]RenewalWindow{}, map[string]bool{}, nil
	expect := p.lastRead
	p.mu.Unlock()
	next := newPlanState()
	n, err := p.readPages(ctx, inv, now, next, pacer{spread: spread, expect: expect, start: time.Now()})
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.lastRead = n
		for _, w := range p.placed {
			next.add(w.AccountID, w.Start, w.End)
		}
		for _, w := range p.undo {
			next.remove(w.AccountID, w.Start, w.End)
		}
		p.st, p.loaded, p.loadedAt = next, true, now
	}
	p.rebuilding, p.cursor, p.placed, p.gone, p.undo = false, RenewalWindow{}, nil, nil, nil
	return n, err
}

// readPages counts every promised window into next, but those placed or
// removed since the rebuild started, which rebuildCount sees to.
func (p *planner) readPages(ctx context.Context, inv Inventory, now time.Time, next *planState, pace pacer) (int, error) {
	if inv == nil {
		return 0, nil
	}
	var from RenewalWindow
	n := 0
	for {
		t0 := time.Now()
		ws, err := inv.RenewalWindows(ctx, now, from, planPage)
		if err != nil {
			return n, fmt.Errorf("renewal planner: %w", err)
		}
		n += len(ws)
		keep := ws[:0]
		p.mu.Lock()
		for _, w := range ws {
			_, placed := p.placed[w.Serial]
			if !placed && !p.gone[w.Serial] {
				keep = append(keep, w)
			}
		}
		if len(ws) > 0 {
			from = ws[len(ws)-1]
			p.cursor = from
		}
		p.mu.Unlock()
		for _, w := range keep {
			next.add(w.AccountID, w.Start, w.End)
		}
		if len(ws) < planPage {
			return n, nil
		}
		if err := pause(ctx, pace.wait(time.Since(t0), n, time.Since(pace.start))); err != nil {
			return n, fmt.Errorf("renewal planner: %w", err)
		}
	}
}

// pacer paces a rebuild's pages.
type pacer struct {
	spread time.Duration // the least time the whole rebuild should take
	expect int           // the windows the previous rebuild read (0: unknown)
	start  time.Time
}

// wait is how long to wait after a page that took took, with read windows
// read so far, elapsed after the start: planYield times the page, and
// longer if the rebuild is ahead of an even spread of expect windows over
// spread. A store that grew since the previous rebuild is read at its
// old size's pace until the spread has passed, then at planYield's.
func (c pacer) wait(took time.Duration, read int, elapsed time.Duration) time.Duration {
	d := planYield * took
	if c.spread <= 0 || c.expect <= 0 {
		return d
	}
	due := time.Duration(float64(c.spread) * min(float64(read)/float64(c.expect), 1))
	return max(d, due-elapsed)
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// runPlanner rebuilds the plan startDefer after start and every
// planReload while planning is on, until ctx ends; each rebuild after the
// first spreads itself over planSpread. Until the first rebuild
// is done the planner places on what it knows (the windows it placed
// itself), as it does during any rebuild; the windows ARI answers are
// those stored with each certificate, which no rebuild changes.
func (s *Service) runPlanner(ctx context.Context) {
	if pause(ctx, s.startDefer) != nil {
		return
	}
	tick := time.NewTicker(planReload)
	defer tick.Stop()
	spread := time.Duration(0) // the first rebuild, as soon as it can
	for {
		if s.rules().ARI.MaxRenewalsPerHour > 0 {
			inv, _ := s.Inventory()
			t0 := time.Now()
			n, err := s.plan.rebuildCount(ctx, inv, s.now(), spread)
			if err == nil {
				spread = planSpread
			}
			switch {
			case err == nil:
				s.log.Debug("renewal planner: rebuilt", "windows", n, "took", time.Since(t0))
			case ctx.Err() == nil:
				s.log.Warn("renewal planner: rebuild failed; placing on the plan as it is", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
