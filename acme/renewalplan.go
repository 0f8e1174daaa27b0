package acme

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// ARIConfig shapes the renewal windows weir suggests (RFC 9773).
type ARIConfig struct {
	// WindowStart and WindowEnd bound where a window may be placed, as
	// fractions of a certificate's lifetime (default 0.6 and 0.8).
	WindowStart, WindowEnd float64
	// WindowWidth is each window's width; 0 means lifetime/45 (two days
	// for 90 days), at least an hour.
	WindowWidth time.Duration
	// MaxRenewalsPerHour is the ceiling the planner keeps the CA's expected
	// renewal rate under; 0 turns planning off (every window is the
	// default one, from two thirds of the lifetime).
	MaxRenewalsPerHour int
	// Target is the fraction of a capacity (the ceiling, an account's
	// limiter headroom) the planner fills before it spreads further
	// (default 0.5), the margin for clients that renew at random times
	// within their windows.
	Target float64
	// ExplanationURL is sent with windows in the past (incident mode).
	ExplanationURL string
}

func (c *ARIConfig) setDefaults() {
	if c.WindowStart <= 0 {
		c.WindowStart = 0.6
	}
	if c.WindowEnd <= c.WindowStart {
		c.WindowEnd = max(0.8, c.WindowStart+0.1)
	}
	if c.Target <= 0 || c.Target > 1 {
		c.Target = 0.5
	}
}

// renewalHeadroom is implemented by a Limits that knows how many renewals
// an hour an account can make without a 429 (limits.Adapter: its san-budget
// rate), so the planner spreads one account's certificates within it.
type renewalHeadroom interface {
	RenewalsPerHour(accountID AccountID, names int) float64
}

// planner places renewal windows. It keeps the expected renewals per hour
// (each window spreads one renewal evenly over its hours, as clients pick a
// uniform time within it) for the whole CA and for each account, loaded
// from the store's promised windows at the first placement, updated as it
// places, and loaded again every planReload, which brings in the windows
// other replicas placed (and drops the hours that have passed). A new
// window goes where the higher of its two utilizations — against the
// ceiling and against the account's limiter headroom — stays lowest, the
// earliest such place on ties.
type planner struct {
	mu       sync.Mutex
	loaded   bool
	loadedAt time.Time
	global   map[int64]float64               // hour index → expected renewals
	acct     map[AccountID]map[int64]float64 // account → hour → expected renewals
}

// planReload is how long the planner trusts what it loaded. With N
// replicas each sees the others' placements this late, so a burst of
// issuance spread over them can fill an hour past the target by at most
// what the others placed in planReload; the target (half the ceiling by
// default) absorbs that, and the limiter, not the plan, is what enforces
// limits (docs/ARCHITECTURE.md, "Replicas").
const planReload = 5 * time.Minute

func hourIndex(t time.Time) int64 { return t.Unix() / 3600 }

// load reads the promised windows at the first placement and again once
// what it read is planReload old. When reading fails, the plan stays as it
// was (if there is one) and the next placement tries again.
func (p *planner) load(ctx context.Context, inv Inventory, now time.Time) error {
	if p.loaded && now.Sub(p.loadedAt) < planReload && !now.Before(p.loadedAt) {
		return nil
	}
	var ws []RenewalWindow
	if inv != nil {
		var err error
		if ws, err = inv.RenewalWindows(ctx, now); err != nil {
			return fmt.Errorf("renewal planner: %w", err)
		}
	}
	p.global, p.acct = map[int64]float64{}, map[AccountID]map[int64]float64{}
	for _, w := range ws {
		p.add(w.AccountID, w.Start, w.End)
	}
	p.loaded, p.loadedAt = true, now
	return nil
}

// add spreads one renewal over the hours of [start, end).
func (p *planner) add(account AccountID, start, end time.Time) {
	h0, h1 := hourIndex(start), hourIndex(end.Add(-time.Nanosecond))
	share := 1 / float64(h1-h0+1)
	a := p.acct[account]
	if a == nil {
		a = map[int64]float64{}
		p.acct[account] = a
	}
	for h := h0; h <= h1; h++ {
		p.global[h] += share
		a[h] += share
	}
}

// place chooses the window of a new certificate of account valid over
// [nb, na) and records it. perHour is the account's headroom (+Inf for
// none).
func (p *planner) place(c ARIConfig, account AccountID, nb, na time.Time, perHour float64) (time.Time, time.Time) {
	life := na.Sub(nb)
	width := c.WindowWidth
	if width <= 0 {
		width = max(life/45, time.Hour)
	}
	lo := nb.Add(time.Duration(float64(life) * c.WindowStart)).Truncate(time.Hour)
	hi := nb.Add(time.Duration(float64(life) * c.WindowEnd)).Add(-width)
	if hi.Before(lo) {
		hi = lo
	}
	ceiling := float64(c.MaxRenewalsPerHour) * c.Target
	acctCap := perHour * c.Target
	hours := int64(math.Ceil(width.Hours()))
	share := 1 / float64(hours)
	best, bestU := lo, math.Inf(1)
	a := p.acct[account]
	for start := lo; !start.After(hi); start = start.Add(time.Hour) {
		u := 0.0
		h0 := hourIndex(start)
		for h := h0; h < h0+hours; h++ {
			u = max(u, (p.global[h]+share)/ceiling)
			if acctCap > 0 && !math.IsInf(acctCap, 1) {
				u = max(u, (a[h]+share)/acctCap)
			}
		}
		// Good enough: under target everywhere; take the earliest.
		if u <= 1 {
			best = start
			break
		}
		if u < bestU {
			best, bestU = start, u
		}
	}
	end := best.Add(time.Duration(hours) * time.Hour)
	p.add(account, best, end)
	return best, end
}

// renewalWindow places the ARI window of a certificate being issued; with
// planning off it is the default window.
func (s *Service) renewalWindow(ctx context.Context, account AccountID, names int, nb, na time.Time) (time.Time, time.Time) {
	c := s.rules().ARI
	if c.MaxRenewalsPerHour <= 0 {
		return defaultWindow(nb, na)
	}
	perHour := math.Inf(1)
	if h, ok := s.limits.(renewalHeadroom); ok {
		perHour = h.RenewalsPerHour(account, names)
	}
	inv, _ := s.Inventory()
	s.plan.mu.Lock()
	defer s.plan.mu.Unlock()
	if err := s.plan.load(ctx, inv, s.now()); err != nil {
		if !s.plan.loaded {
			s.log.Warn("renewal planner: using the default window", "err", err)
			return defaultWindow(nb, na)
		}
		s.log.Warn("renewal planner: placing on the windows loaded before", "loaded_at", s.plan.loadedAt, "err", err)
	}
	return s.plan.place(c, account, nb, na, perHour)
}
