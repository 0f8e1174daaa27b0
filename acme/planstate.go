package acme

import "time"

// planState is what the renewal planner knows: the expected renewals per
// hour of the whole CA and of each account. Its memory grows with the
// hours and the accounts it tracks, not with the certificates: the CA's
// load is one number per hour, and an account's is either the short list
// of its windows (while it has at most denseAfter of them) or one number
// per hour of the span its windows cover.
type planState struct {
	global map[int64]float64 // hour index → expected renewals
	acct   map[AccountID]*acctPlan
}

// denseAfter is the number of windows past which an account's load is
// kept per hour rather than as its list of windows: 128 windows take
// 1 KiB, the same as 128 hours.
const denseAfter = 128

// acctPlan is one account's expected renewals.
type acctPlan struct {
	n     int       // windows counted
	wins  []planWin // while n ≤ denseAfter
	base  int64     // once dense: the hour of hours[0]
	hours []float64 // once dense
}

// planWin is a window of hours hours from hour h0, one renewal spread
// evenly over them.
type planWin struct {
	h0    int32
	hours int32
}

func newPlanState() *planState {
	return &planState{global: map[int64]float64{}, acct: map[AccountID]*acctPlan{}}
}

// windowHours is the hour span of [start, end): its first hour and its
// number of hours.
func windowHours(start, end time.Time) (int64, int64) {
	h0, h1 := hourIndex(start), hourIndex(end.Add(-time.Nanosecond))
	return h0, max(h1-h0+1, 1)
}

// add counts one renewal of account spread over the hours of [start, end).
func (st *planState) add(account AccountID, start, end time.Time) {
	h0, n := windowHours(start, end)
	share := 1 / float64(n)
	for h := h0; h < h0+n; h++ {
		st.global[h] += share
	}
	a := st.acct[account]
	if a == nil {
		a = &acctPlan{}
		st.acct[account] = a
	}
	a.n++
	if a.hours == nil && a.n <= denseAfter {
		a.wins = append(a.wins, planWin{h0: int32(h0), hours: int32(n)})
		return
	}
	if a.hours == nil { // becomes dense
		wins := a.wins
		a.wins = nil
		for _, w := range wins {
			a.spread(int64(w.h0), int64(w.hours), 1)
		}
	}
	a.spread(h0, n, 1)
}

// remove takes back what add(account, start, end) counted; counting what
// was never added is harmless (the loads stay at or above zero).
func (st *planState) remove(account AccountID, start, end time.Time) {
	h0, n := windowHours(start, end)
	share := 1 / float64(n)
	for h := h0; h < h0+n; h++ {
		if v := st.global[h] - share; v > 1e-9 {
			st.global[h] = v
		} else {
			delete(st.global, h)
		}
	}
	a := st.acct[account]
	if a == nil {
		return
	}
	if a.hours == nil {
		for i, w := range a.wins {
			if int64(w.h0) == h0 && int64(w.hours) == n {
				a.wins[i] = a.wins[len(a.wins)-1]
				a.wins = a.wins[:len(a.wins)-1]
				a.n--
				break
			}
		}
	} else {
		a.spread(h0, n, -1)
		a.n--
	}
	if a.n <= 0 {
		delete(st.acct, account)
	}
}

// spread adds sign/n to each of the n hours from h0 of a dense account,
// growing its span as needed.
func (a *acctPlan) spread(h0, n int64, sign float64) {
	if len(a.hours) == 0 {
		a.base, a.hours = h0, make([]float64, n)
	}
	if h0 < a.base {
		a.hours = append(make([]float64, a.base-h0), a.hours...)
		a.base = h0
	}
	if end := h0 + n - a.base; end > int64(len(a.hours)) {
		a.hours = append(a.hours, make([]float64, end-int64(len(a.hours)))...)
	}
	share := sign / float64(n)
	for h := h0; h < h0+n; h++ {
		a.hours[h-a.base] = max(a.hours[h-a.base]+share, 0)
	}
}

// load returns the account's expected renewals in each hour of
// [from, to), into buf.
func (a *acctPlan) load(from, to int64, buf []float64) []float64 {
	buf = append(buf[:0], make([]float64, to-from)...)
	if a == nil {
		return buf
	}
	if a.hours != nil {
		for h := max(from, a.base); h < min(to, a.base+int64(len(a.hours))); h++ {
			buf[h-from] = a.hours[h-a.base]
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
func (st *planState) count(account AccountID) int {
	if a := st.acct[account]; a != nil {
		return a.n
	}
	return 0
}
