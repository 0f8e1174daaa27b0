// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"
)

// What the plan expects against what the CA and each account can take:
// the operator's warning that max-renewals-per-hour, or an account's
// san-budget, is below what the certificates already issued will need to
// renew. The planner keeps every window under the target of both where
// it can. Where no start in a certificate's span keeps the window under
// the capacity itself (not only the target) it still places one, since
// every certificate gets a window, and counts it here. The limiter, not
// the plan, enforces limits: an account over its budget meets 429s when
// its certificates renew, and a CA over its ceiling is asked for more
// renewals than its operator said it serves. Neither is refused in
// advance; both are shown (Capacity) so that the operator sizes the
// limits before the renewals come.

// watchMax bounds the accounts the planner remembers as placed over
// their headroom (the counters count every placement).
const watchMax = 64

// overWatch is what placements over a capacity left behind.
type overWatch struct {
	ceiling, account atomic.Uint64 // placements over each capacity
	// accts maps an account placed over its headroom to the number of
	// names of that certificate, which its headroom is per (p.mu).
	accts map[string]int
}

// Capacity is the plan's load against its capacities at At.
type Capacity struct {
	At time.Time `json:"at"`
	// Slot is the plan's slot, as Go prints a duration ("1h0m0s", "1m0s").
	Slot string `json:"slot"`
	// Loaded is false until the plan was first rebuilt from the store:
	// before that it holds only what this replica placed since it started.
	Loaded bool `json:"loaded"`
	// CeilingPerHour is max-renewals-per-hour.
	CeilingPerHour float64 `json:"ceiling_per_hour"`
	// PeakPerHour is the highest expected renewal rate of any slot from
	// now on, per hour, and PeakAt that slot's start (nil when nothing is
	// planned).
	PeakPerHour float64    `json:"peak_per_hour"`
	PeakAt      *time.Time `json:"peak_at"`
	// SlotsOver counts the slots from now on whose expected renewals
	// exceed the ceiling, and OverFrom is the first of them.
	SlotsOver int        `json:"slots_over"`
	OverFrom  *time.Time `json:"over_from"`
	// Accounts are the accounts whose planned renewals exceed their
	// headroom (the renewals an hour their san-budget allows) in some
	// slot, the furthest over first; AccountsOver counts them. Only
	// accounts a placement on this replica found over since it started
	// are known (at most watchMax).
	Accounts     []AccountCapacity `json:"accounts"`
	AccountsOver int               `json:"accounts_over"`
	// PlacedOverCeiling and PlacedOverAccount count the windows this
	// replica placed since it started where no start kept the CA under
	// its ceiling, or the account under its headroom.
	PlacedOverCeiling uint64 `json:"placed_over_ceiling"`
	PlacedOverAccount uint64 `json:"placed_over_account"`
}

// AccountCapacity is one account's line of Capacity.
type AccountCapacity struct {
	Account         string    `json:"account"`
	PeakPerHour     float64   `json:"peak_per_hour"`
	PeakAt          time.Time `json:"peak_at"`
	HeadroomPerHour float64   `json:"headroom_per_hour"`
}

// Over reports whether the plan exceeds the ceiling or an account's
// headroom anywhere ahead.
func (c *Capacity) Over() bool { return c.SlotsOver > 0 || c.AccountsOver > 0 }

// noteOver counts a window of account (names identifiers, headroom
// perHour) placed on the slots [h0, h0+n) whose utilization stayed over
// the target everywhere: over the ceiling, over the account's headroom,
// or both. share is the window's load in each slot, acct the account's
// load from h0 (nil when the placement did not read it). p.mu is held.
func (p *Planner) noteOver(c Config, account string, names int, h0, n int64, share float64, acct []float64, perHour float64) {
	perSlot := p.st.unit.Hours()
	ceiling := float64(c.MaxRenewalsPerHour) * perSlot
	overC, overA := false, false
	for i := range n {
		overC = overC || p.st.global.at(h0+i)+share > ceiling
		overA = overA || (acct != nil && acct[i]+share > perHour*perSlot)
	}
	if overC {
		p.over.ceiling.Add(1)
	}
	if !overA {
		return
	}
	p.over.account.Add(1)
	if _, ok := p.over.accts[account]; ok || len(p.over.accts) < watchMax {
		p.over.accts[account] = names
	}
}

// Capacity is the plan's load from now on against the ceiling of c and
// against the headroom of the accounts placed over theirs, which
// headroom gives (renewals an hour of certificates of names identifiers;
// +Inf for none) under the configuration in force; with headroom nil
// no account is shown. An account no longer over is forgotten.
func (p *Planner) Capacity(c Config, headroom func(account string, names int) float64) Capacity {
	p.mu.Lock()
	st, now := p.st, p.now()
	perSlot := st.unit.Hours()
	out := Capacity{At: now, Slot: st.unit.String(), Loaded: p.loaded, CeilingPerHour: float64(c.MaxRenewalsPerHour),
		PlacedOverCeiling: p.over.ceiling.Load(), PlacedOverAccount: p.over.account.Load()}
	from := max(st.index(now), st.floor)
	peak, at := st.global.peak(from, func(h int64, v float64) {
		if v > out.CeilingPerHour*perSlot {
			if out.SlotsOver++; out.SlotsOver == 1 {
				t := st.start(h)
				out.OverFrom = &t
			}
		}
	})
	if peak > 0 {
		t := st.start(at)
		out.PeakPerHour, out.PeakAt = peak/perSlot, &t
	}
	type watched struct {
		id    string
		names int
		peak  float64
		at    int64
	}
	var ws []watched
	for id, names := range p.over.accts {
		if headroom == nil {
			break
		}
		a := st.acct[id]
		if a == nil {
			delete(p.over.accts, id)
			continue
		}
		v, h := a.peak(from)
		ws = append(ws, watched{id, names, v, h})
	}
	p.mu.Unlock()
	// The headroom is read without p.mu: it asks the limiter.
	var gone []string
	for _, w := range ws {
		room := headroom(w.id, w.names)
		if w.peak <= room*perSlot {
			gone = append(gone, w.id)
			continue
		}
		out.Accounts = append(out.Accounts, AccountCapacity{Account: w.id, PeakPerHour: w.peak / perSlot, PeakAt: st.start(w.at), HeadroomPerHour: room})
	}
	out.AccountsOver = len(out.Accounts)
	slices.SortFunc(out.Accounts, func(a, b AccountCapacity) int {
		return cmp.Or(cmp.Compare(b.PeakPerHour/b.HeadroomPerHour, a.PeakPerHour/a.HeadroomPerHour), cmp.Compare(a.Account, b.Account))
	})
	if len(gone) > 0 {
		p.mu.Lock()
		for _, id := range gone {
			delete(p.over.accts, id)
		}
		p.mu.Unlock()
	}
	return out
}

// start is the start of slot h.
func (st *planState) start(h int64) time.Time {
	return time.Unix(h*int64(st.unit/time.Second), 0).UTC()
}

// peak is the highest load of the slots from from on and its slot, after
// calling each (when not nil) with every slot's load.
func (l *hourLoads) peak(from int64, each func(h int64, v float64)) (float64, int64) {
	best, at := 0.0, int64(0)
	for i := max(from-l.base, 0); i < int64(len(l.v)); i++ {
		v := l.v[i]
		if each != nil {
			each(l.base+i, v)
		}
		if v > best {
			best, at = v, l.base+i
		}
	}
	return best, at
}

// peak is the account's highest load of the slots from from on and its
// slot.
func (a *acctPlan) peak(from int64) (float64, int64) {
	if a.dense {
		return a.hours.peak(from, nil)
	}
	end := from
	for _, w := range a.wins {
		end = max(end, int64(w.h0)+int64(w.hours))
	}
	var l hourLoads
	l.base, l.v = from, a.load(from, end, nil)
	return l.peak(from, nil)
}
