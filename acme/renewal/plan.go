// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Planner places renewal windows. It keeps the expected renewals per hour
// (each window spreads one renewal evenly over its hours, as clients pick a
// uniform time within it) for the whole CA and for each account
// (planState), updated as it places and as certificates are revoked or
// their windows moved. It is rebuilt in full from the store's promised
// windows in the background (rebuild.go) at start, and refreshed every
// planReload from what changed in the store since (delta.go), which
// brings in what other replicas placed and took out and lets the hours
// that have passed go. No placement waits for either: it places on what
// the planner knows. A new window goes where the higher of its two
// utilizations — against the ceiling and against the account's limiter
// headroom — stays lowest, the earliest such place on ties.
type Planner struct {
	mu sync.Mutex
	// lapsed is set when a certificate was issued with planning off, or
	// the slot changed: the plan does not hold it, and the next update
	// rebuilds.
	lapsed atomic.Bool
	now    func() time.Time
	unit   time.Duration // the slot the configuration asks for (setUnit)
	st     *planState
	// place's scratch: the account's load, each hour's utilization and
	// the sliding maximum's hours
	buf      []float64
	util     []float64
	dq       []int64
	page     int       // windows read at a time: planPage (tests read smaller pages)
	yield    int       // planYield (tests: 0)
	planFeed           // what was placed and taken out (delta.go)
	over     overWatch // placements over a capacity (capacity.go)
	// The last full rebuild (rebuild.go): it read the certificates
	// issued before cut, from builtAt, each page at the time pages gives,
	// which the refresh after it needs to tell what the rebuild saw.
	loaded  bool // a full rebuild has completed
	cut     time.Time
	builtAt time.Time
	pages   []pageMark
	// While a full rebuild runs: the last window of the pages it has
	// sorted out (in the order of Feed.RenewalWindows), the windows
	// placed and the certificates removed since it started, and the
	// removed windows its state holds.
	rebuilding bool
	cursor     Window
	placed     map[string]Window
	gone       map[string]bool
	undo       []Window
}

// NewPlanner returns a Planner on the clock now (nil: time.Now).
func NewPlanner(now func() time.Time) *Planner {
	if now == nil {
		now = time.Now
	}
	return &Planner{now: now, unit: time.Hour, st: newPlanState(now(), time.Hour), page: planPage, yield: planYield, planFeed: newPlanFeed(),
		over: overWatch{accts: map[string]int{}}}
}

// planReload is how often the planner refreshes what it knows from the
// store. With N replicas each sees the others' placements this late (and
// planMargin), so a burst of issuance spread over them can fill an hour
// past the target by at most what the others placed meanwhile; the
// target (half the ceiling by default) absorbs that, and the limiter, not
// the plan, is what enforces limits (docs/ARCHITECTURE.md, "Replicas").
const planReload = 5 * time.Minute

// slotIndex is the number of the slot of length unit (whole seconds) that
// t falls in, counted from the Unix epoch.
func slotIndex(t time.Time, unit time.Duration) int64 {
	s, u := int64(unit/time.Second), t.Unix()
	if u < 0 {
		return (u - s + 1) / s
	}
	return u / s
}

func hourIndex(t time.Time) int64 { return slotIndex(t, time.Hour) }

// placeSpan is where a window of a certificate valid over [nb, na) may
// start, [lo, hi] on a slot of length unit, and its width in whole slots;
// ok is false when no window of that width, starting on a slot, ends
// by window-end: the lifetime is too short for the slot.
func placeSpan(c Config, unit time.Duration, nb, na time.Time) (lo, hi time.Time, slots int64, ok bool) {
	life := na.Sub(nb)
	width := c.WindowWidth
	if width <= 0 {
		width = max(life/45, unit)
	}
	lo = nb.Add(time.Duration(float64(life) * c.WindowStart)).Truncate(unit)
	hi = nb.Add(time.Duration(float64(life) * c.WindowEnd)).Add(-width)
	ok = !hi.Before(lo)
	if !ok {
		hi = lo
	}
	return lo, hi, int64(math.Ceil(float64(width) / float64(unit))), ok
}

// place chooses the window of a new certificate of account, for names
// identifiers, valid over [nb, na) and records it. perHour is the
// account's headroom (+Inf for none). A certificate too short for the
// plan's slot (one that an order's notAfter or a tenant's cap made
// shorter than the configured lifetimes SlotFor chose the slot for) gets
// DefaultWindow, which the plan does not count (planState.narrow). A
// window placed where no start stays under the target is counted when it
// goes over a capacity itself (noteOver). p.mu is held.
func (p *Planner) place(c Config, serial, account string, names int, nb, na time.Time, perHour float64) (time.Time, time.Time) {
	unit := p.st.unit
	lo, hi, hours, ok := placeSpan(c, unit, nb, na)
	if !ok {
		start, end := DefaultWindow(nb, na)
		p.added(serial, account, start, end)
		return start, end
	}
	// The ceiling and the account's headroom are per hour; the plan
	// counts per slot.
	perSlot := unit.Hours()
	ceiling := float64(c.MaxRenewalsPerHour) * c.Target * perSlot
	acctCap := perHour * c.Target * perSlot
	share := 1 / float64(hours)
	// An account's load in an hour is at most its number of windows (each
	// adds at most one renewal to an hour), so when that number plus this
	// one fits its headroom the account cannot be what limits the
	// placement, and its hours are not read.
	useAcct := acctCap > 0 && !math.IsInf(acctCap, 1) && float64(p.st.count(account))+1 > acctCap
	first := p.st.index(lo)
	if useAcct {
		p.buf = p.st.acct[account].load(first, p.st.index(hi)+hours, p.buf)
	}
	// A start's utilization is the highest of its hours'; the starts are
	// read in order, each hour's utilization computed once and the
	// highest of the window kept by a sliding maximum (a deque of hours
	// of falling utilization), so a placement costs the span of its
	// starts, not that times the window's hours: at a million windows
	// every hour is past the target and every start is read.
	starts := int64(hi.Sub(lo)/unit) + 1
	util, dq, head := p.util[:0], p.dq[:0], 0
	best, bestU, fits := lo, math.Inf(1), false
	for i := int64(0); i < starts+hours-1; i++ {
		h := first + i
		u := (p.st.global.at(h) + share) / ceiling
		if useAcct {
			u = max(u, (p.buf[i]+share)/acctCap)
		}
		util = append(util, u)
		for len(dq) > head && util[dq[len(dq)-1]] <= u {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, i)
		k := i - hours + 1 // the start whose window ends with hour i
		if k < 0 {
			continue
		}
		for dq[head] < k {
			head++
		}
		// Good enough: under target everywhere; take the earliest.
		if w := util[dq[head]]; w <= 1 {
			best, fits = lo.Add(time.Duration(k)*unit), true
			break
		} else if w < bestU {
			best, bestU = lo.Add(time.Duration(k)*unit), w
		}
	}
	p.util, p.dq = util, dq
	if !fits {
		k := p.st.index(best) - first
		var acct []float64
		if useAcct {
			acct = p.buf[k : k+hours]
		}
		p.noteOver(c, account, names, first+k, hours, share, acct, perHour)
	}
	end := best.Add(time.Duration(hours) * unit)
	p.added(serial, account, best, end)
	return best, end
}

// Place places the ARI window of certificate serial of account, for
// names identifiers, valid over [nb, na), being issued, and records it;
// perHour is the account's renewal headroom (+Inf for none). With
// planning off (c.MaxRenewalsPerHour 0) it is the default window, in no
// plan, and the next update rebuilds the plan in full.
func (p *Planner) Place(c Config, serial, account string, names int, nb, na time.Time, perHour float64) (time.Time, time.Time) {
	if c.MaxRenewalsPerHour <= 0 {
		p.lapsed.Store(true)
		return DefaultWindow(nb, na)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setUnit(c.slot())
	return p.place(c, serial, account, names, nb, na, perHour)
}

// setUnit makes unit the plan's slot. A change (the configured lifetimes
// changed: SlotFor) starts an empty plan in the new slots and has the
// next update rebuild it in full from the store, as after a start;
// meanwhile placements go on what the planner knows. p.mu is held.
func (p *Planner) setUnit(unit time.Duration) {
	p.unit = unit
	if unit == p.st.unit {
		return
	}
	p.st = newPlanState(p.now(), unit)
	p.lapsed.Store(true)
}

// Remove takes w, the window of a certificate issued at issued that was
// revoked or whose window was moved into the past, out of the plan.
func (p *Planner) Remove(c Config, w Window, issued time.Time) {
	p.ifPlanned(c, w, func() { p.removed(w, issued) })
}

// Forget takes back w, the window placed for a certificate issued at
// issued, when the certificate was not stored after all.
func (p *Planner) Forget(c Config, w Window, issued time.Time) {
	p.ifPlanned(c, w, func() { p.forget(w, issued) })
}

// ifPlanned runs f with p.mu held if w may be in a plan: planning is on
// and w is a placed window.
func (p *Planner) ifPlanned(c Config, w Window, f func()) {
	if c.MaxRenewalsPerHour <= 0 || w.Start.IsZero() || !w.End.After(w.Start) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

// DefaultWindow is the window of a certificate the planner never placed:
// from two thirds of its lifetime, 1/45 of the lifetime wide (two days for
// 90 days).
func DefaultWindow(nb, na time.Time) (time.Time, time.Time) {
	life := na.Sub(nb)
	start := nb.Add(life * 2 / 3)
	return start, start.Add(max(life/45, time.Minute))
}
