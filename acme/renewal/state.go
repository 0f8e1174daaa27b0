// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"math"
	"time"
)

// planState is what the renewal planner knows: the expected renewals per
// slot (an hour, or a minute for short lifetimes: SlotFor) of the whole CA
// and of each account. Its memory grows with the slots and the accounts
// it tracks, not with the certificates: the CA's load is one number per
// slot, and an account's is either the short list of its windows (while
// it has at most denseAfter of them) or one number per slot of the span
// its windows cover. Slots before floor have passed: nothing is counted
// in them, and trim lets them go. The code says "hour" for a slot, its
// usual length.
type planState struct {
	global hourLoads // the CA's expected renewals per slot
	acct   map[string]*acctPlan
	floor  int64         // the first slot counted
	unit   time.Duration // a slot's length
}

// hourLoads is expected renewals per hour over a span of hours: a slice,
// not a map, since a rebuild adds to every hour of a million windows
// (a map assignment per hour was a third of a rebuild's CPU) and a
// placement reads up to hundreds of hours.
type hourLoads struct {
	base int64     // the hour of v[0]
	v    []float64 // v[i]: hour base+i
}

// at is the load of hour h.
func (l *hourLoads) at(h int64) float64 {
	if i := h - l.base; i >= 0 && i < int64(len(l.v)) {
		return l.v[i]
	}
	return 0
}

// spread adds sign/n to each of the n hours from h0 that are not before
// floor, growing the span as needed for an addition (a removal touches
// only the span there is); a load never goes below zero.
func (l *hourLoads) spread(h0, n int64, sign float64, floor int64) {
	from, to := max(h0, floor), h0+n
	if sign < 0 {
		from, to = max(from, l.base), min(to, l.base+int64(len(l.v)))
	}
	if from >= to {
		return
	}
	if len(l.v) == 0 {
		l.base, l.v = from, make([]float64, to-from)
	}
	if from < l.base {
		l.v = append(make([]float64, l.base-from), l.v...)
		l.base = from
	}
	if end := to - l.base; end > int64(len(l.v)) {
		l.v = append(l.v, make([]float64, end-int64(len(l.v)))...)
	}
	share := sign / float64(n)
	for i := from - l.base; i < to-l.base; i++ {
		if v := l.v[i] + share; v > 1e-9 {
			l.v[i] = v
		} else {
			l.v[i] = 0
		}
	}
}

// trim lets the hours before floor go and returns the sum of their loads.
// The slice is cut, not copied: what it held before is freed when a later
// addition outgrows it.
func (l *hourLoads) trim(floor int64) float64 {
	k := min(floor-l.base, int64(len(l.v)))
	if k <= 0 {
		return 0
	}
	sum := 0.0
	for _, v := range l.v[:k] {
		sum += v
	}
	if l.v = l.v[k:]; len(l.v) == 0 {
		l.v = nil
	}
	l.base = floor
	return sum
}

// busy is the number of hours with a load.
func (l *hourLoads) busy() int {
	n := 0
	for _, v := range l.v {
		if v > 0 {
			n++
		}
	}
	return n
}

// denseAfter is the number of windows past which an account's load is
// kept per hour rather than as its list of windows: 128 windows take
// 1 KiB, the same as 128 hours.
const denseAfter = 128

// acctPlan is one account's expected renewals.
type acctPlan struct {
	n     int       // windows counted that have not ended
	wins  []planWin // while n ≤ denseAfter
	hours hourLoads // once dense
	ends  hourLoads // once dense: the windows counted by their last hour
	dense bool
}

// planWin is a window of hours hours from hour h0, one renewal spread
// evenly over them.
type planWin struct {
	h0    int32
	hours int32
}

// newPlanState is an empty state in slots of unit, counting from the
// slot of now.
func newPlanState(now time.Time, unit time.Duration) *planState {
	return &planState{acct: map[string]*acctPlan{}, floor: slotIndex(now, unit), unit: unit}
}

// index is the slot of t.
func (st *planState) index(t time.Time) int64 { return slotIndex(t, st.unit) }

// narrow reports whether [start, end) is narrower than a slot: the
// window of a certificate too short for the slot (Planner.place), which
// the plan does not count; every window the planner places in these
// slots is at least one wide.
func (st *planState) narrow(start, end time.Time) bool { return end.Sub(start) < st.unit }

// windowHours is the slot span of [start, end): its first slot and its
// number of slots.
func (st *planState) windowHours(start, end time.Time) (int64, int64) {
	h0, h1 := st.index(start), st.index(end.Add(-time.Nanosecond))
	return h0, max(h1-h0+1, 1)
}

// add counts one renewal of account spread over the hours of [start,
// end); a window whose hours have all passed is not counted, nor one
// narrower than a slot (narrow).
func (st *planState) add(account string, start, end time.Time) {
	if st.narrow(start, end) {
		return
	}
	h0, n := st.windowHours(start, end)
	if h0+n <= st.floor {
		return
	}
	st.global.spread(h0, n, 1, st.floor)
	a := st.acct[account]
	if a == nil {
		a = &acctPlan{}
		st.acct[account] = a
	}
	a.n++
	if !a.dense && a.n <= denseAfter {
		a.wins = append(a.wins, planWin{h0: int32(h0), hours: int32(n)})
		return
	}
	if !a.dense { // becomes dense
		wins := a.wins
		a.wins, a.dense = nil, true
		for _, w := range wins {
			a.spread(int64(w.h0), int64(w.hours), 1, st.floor)
		}
	}
	a.spread(h0, n, 1, st.floor)
}

// spread counts (sign 1) or takes back (-1) a window of a dense account.
func (a *acctPlan) spread(h0, n int64, sign float64, floor int64) {
	a.hours.spread(h0, n, sign, floor)
	a.ends.spread(h0+n-1, 1, sign, floor)
}

// remove takes back what add(account, start, end) counted; counting what
// was never added is harmless (the loads stay at or above zero), and a
// window whose hours have all passed was let go by trim already.
func (st *planState) remove(account string, start, end time.Time) {
	if st.narrow(start, end) {
		return
	}
	h0, n := st.windowHours(start, end)
	if h0+n <= st.floor {
		return
	}
	st.global.spread(h0, n, -1, st.floor)
	a := st.acct[account]
	if a == nil {
		return
	}
	if !a.dense {
		for i, w := range a.wins {
			if int64(w.h0) == h0 && int64(w.hours) == n {
				a.wins[i] = a.wins[len(a.wins)-1]
				a.wins = a.wins[:len(a.wins)-1]
				a.n--
				break
			}
		}
	} else {
		a.spread(h0, n, -1, st.floor)
		a.n--
	}
	if a.n <= 0 {
		delete(st.acct, account)
	}
}

// trim lets the hours before floor go: the CA's and each account's, the
// windows that ended with them, and the accounts left without windows.
func (st *planState) trim(floor int64) {
	if floor <= st.floor {
		return
	}
	st.floor = floor
	st.global.trim(floor)
	for id, a := range st.acct {
		if a.dense {
			a.hours.trim(floor)
			a.n -= int(math.Round(a.ends.trim(floor)))
		} else {
			keep := a.wins[:0]
			for _, w := range a.wins {
				if int64(w.h0)+int64(w.hours) > floor {
					keep = append(keep, w)
				}
			}
			a.wins, a.n = keep, len(keep)
		}
		if a.n <= 0 {
			delete(st.acct, id)
		}
	}
}

// load returns the account's expected renewals in each hour of
// [from, to), into buf.
func (a *acctPlan) load(from, to int64, buf []float64) []float64 {
	buf = append(buf[:0], make([]float64, to-from)...)
	if a == nil {
		return buf
	}
	if a.dense {
		for h := max(from, a.hours.base); h < min(to, a.hours.base+int64(len(a.hours.v))); h++ {
			buf[h-from] = a.hours.v[h-a.hours.base]
		}
		return buf
	}
	for _, w := range a.wins {
		share := 1 / float64(w.hours)
		for h := max(from, int64(w.h0)); h < min(to, int64(w.h0)+int64(w.hours)); h++ {
			buf[h-from] += share
		}
	}
	return buf
}

// count is the number of windows counted for account.
func (st *planState) count(account string) int {
	if a := st.acct[account]; a != nil {
		return a.n
	}
	return 0
}
