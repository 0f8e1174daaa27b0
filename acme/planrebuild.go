package acme

import (
	"context"
	"fmt"
	"time"
)

// planPage is how many promised windows a rebuild reads at a time; the
// planner's lock is held only to merge one page.
const planPage = 2000

// added records the window placed for serial. p.mu is held.
func (p *planner) added(serial string, account AccountID, start, end time.Time) {
	p.st.add(account, start, end)
	if p.next != nil {
		p.next.add(account, start, end)
		p.placed[serial] = true
	}
}

// removed takes back the window of serial (revoked, or moved into the
// past). p.mu is held. While a rebuild runs, the window leaves the state
// being built too when it is there: placed during the rebuild, or read
// by a page already merged. A page read just before the revocation was
// stored and merged just before this call may not have held it; then the
// rebuilt state undercounts that one window until the next rebuild.
func (p *planner) removed(serial string, account AccountID, start, end time.Time) {
	p.st.remove(account, start, end)
	if p.next != nil {
		if p.placed[serial] || !p.cursor.Before(RenewalWindow{Serial: serial, End: end}) {
			p.next.remove(account, start, end)
		}
		delete(p.placed, serial)
		p.gone[serial] = true
	}
}

// rebuild reads the promised windows (the unrevoked certificates' windows
// that end after now) page by page into a new state and then puts it in
// place of the one in use, with what was placed and removed meanwhile,
// so that nothing waits for it. It fails, keeping the state in use, when
// the store cannot be read, or when another rebuild is running.
func (p *planner) rebuild(ctx context.Context, inv Inventory, now time.Time) error {
	_, err := p.rebuildCount(ctx, inv, now)
	return err
}

// rebuildCount is rebuild, and returns the number of windows it read.
func (p *planner) rebuildCount(ctx context.Context, inv Inventory, now time.Time) (int, error) {
	p.mu.Lock()
	if p.next != nil {
		p.mu.Unlock()
		return 0, fmt.Errorf("renewal planner: a rebuild is running")
	}
	p.next, p.cursor, p.placed, p.gone = newPlanState(), RenewalWindow{}, map[string]bool{}, map[string]bool{}
	p.mu.Unlock()
	n, err := p.readPages(ctx, inv, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.st, p.loaded, p.loadedAt = p.next, true, now
	}
	p.next, p.cursor, p.placed, p.gone = nil, RenewalWindow{}, nil, nil
	return n, err
}

func (p *planner) readPages(ctx context.Context, inv Inventory, now time.Time) (int, error) {
	if inv == nil {
		return 0, nil
	}
	var from RenewalWindow
	n := 0
	for {
		ws, err := inv.RenewalWindows(ctx, now, from, planPage)
		if err != nil {
			return n, fmt.Errorf("renewal planner: %w", err)
		}
		n += len(ws)
		p.mu.Lock()
		for _, w := range ws {
			if !p.placed[w.Serial] && !p.gone[w.Serial] {
				p.next.add(w.AccountID, w.Start, w.End)
			}
		}
		if len(ws) > 0 {
			from = ws[len(ws)-1]
			p.cursor = from
		}
		p.mu.Unlock()
		if len(ws) < planPage {
			return n, nil
		}
	}
}

// runPlanner rebuilds the plan at start and every planReload while
// planning is on, until ctx ends.
func (s *Service) runPlanner(ctx context.Context) {
	tick := time.NewTicker(planReload)
	defer tick.Stop()
	for {
		if s.rules().ARI.MaxRenewalsPerHour > 0 {
			inv, _ := s.Inventory()
			t0 := time.Now()
			n, err := s.plan.rebuildCount(ctx, inv, s.now())
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
