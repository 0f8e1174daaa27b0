// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// What the dashboard remembers of the limiter, fed by the same events as
// the metrics. Memory is fixed: at most recentDenials denials and
// hotKeyLimit buckets (plus their key strings).
const (
	recentDenials = 256
	hotKeyLimit   = 1024
)

// Denial is one request the limiter refused (one 429), described by its
// strictest denied bucket.
type Denial struct {
	// At is when the limiter decided (the backend's clock).
	At time.Time `json:"at"`
	// Action is what asked: "global", "new-account", "new-order" or
	// "finalize".
	Action string `json:"action"`
	// Limit and Key name the bucket ("order-creation", the account ID).
	Limit string `json:"limit"`
	Key   string `json:"key"`
	// RetryAfter is the exact wait the client was given; 0 with Never.
	RetryAfter time.Duration `json:"retry_after_ns"`
	// Never reports a request larger than the limit's burst.
	Never bool `json:"never,omitempty"`
	// Remaining is what was left in that bucket.
	Remaining int64 `json:"remaining"`
	// Denied is how many buckets denied the request (1 or more).
	Denied int `json:"denied"`
}

// HotKey is one limiter bucket the spends touched recently.
type HotKey struct {
	Limit string `json:"limit"`
	Key   string `json:"key"`
	// Hits counts the decided requests that touched the bucket (spent,
	// checked or denied) since it entered the set.
	Hits uint64 `json:"hits"`
	// Last is when the bucket was last touched.
	Last time.Time `json:"last"`
}

// hotID identifies a bucket without building its BucketKey string.
type hotID struct {
	limit ratelimit.Name
	key   string
}

// hotEntry is one bucket in the hot set, linked from most to least
// recently touched.
type hotEntry struct {
	id         hotID
	hits       uint64
	last       time.Time
	prev, next *hotEntry
}

// activity is the limiter's recent history: a ring of the last denials,
// the denials per limit, and a bounded set of the buckets most recently
// touched (least recently touched evicted first). One mutex guards it;
// every method holds it only for a few map and pointer operations.
type activity struct {
	mu sync.Mutex

	ring  [recentDenials]Denial
	next  int // slot the next denial goes to
	count int // slots filled, at most recentDenials

	byLimit map[ratelimit.Name]uint64

	hot        map[hotID]*hotEntry
	head, tail *hotEntry // most, least recently touched
}

func (a *activity) init() {
	a.byLimit = map[ratelimit.Name]uint64{}
	a.hot = make(map[hotID]*hotEntry, hotKeyLimit)
}

// deny records one refused request: d is its decision, denied every
// denied bucket (d itself when it lists none).
func (a *activity) deny(action string, d ratelimit.Decision, denied []ratelimit.Decision, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ring[a.next] = Denial{
		At: at, Action: action, Limit: d.Limit.String(), Key: d.Key,
		RetryAfter: d.RetryAfter, Never: d.Never, Remaining: d.Remaining, Denied: len(denied),
	}
	a.next = (a.next + 1) % recentDenials
	a.count = min(a.count+1, recentDenials)
	var seen names
	for _, x := range denied {
		if seen.first(x.Limit) {
			a.byLimit[x.Limit]++
		}
	}
}

// touch records that a decided request asked about the buckets of reqs.
func (a *activity) touch(reqs []ratelimit.Request, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range reqs {
		id := hotID{r.Name, r.Key}
		e := a.hot[id]
		if e == nil {
			if len(a.hot) >= hotKeyLimit {
				e = a.tail // reuse the least recently touched
				a.unlink(e)
				delete(a.hot, e.id)
				*e = hotEntry{}
			} else {
				e = &hotEntry{}
			}
			e.id = id
			a.hot[id] = e
		} else {
			a.unlink(e)
		}
		e.hits++
		if at.After(e.last) {
			e.last = at
		}
		a.pushFront(e)
	}
}

func (a *activity) unlink(e *hotEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		a.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		a.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (a *activity) pushFront(e *hotEntry) {
	e.next = a.head
	if a.head != nil {
		a.head.prev = e
	}
	a.head = e
	if a.tail == nil {
		a.tail = e
	}
}

// Recent429s returns the last n denials, newest first; n <= 0 returns
// all that are kept (at most 256).
func (m *Metrics) Recent429s(n int) []Denial {
	a := &m.activity
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= 0 || n > a.count {
		n = a.count
	}
	out := make([]Denial, n)
	for i := range out {
		out[i] = a.ring[(a.next-1-i+recentDenials)%recentDenials]
	}
	return out
}

// HotKeys returns up to n of the limiter buckets in the hot set, most
// touched first, then most recently touched; n <= 0 returns all (at most
// 1024). The set keeps the buckets most recently touched by a decided
// request, so a bucket that goes quiet leaves it once 1024 others have
// been touched since.
func (m *Metrics) HotKeys(n int) []HotKey {
	a := &m.activity
	a.mu.Lock()
	out := make([]HotKey, 0, len(a.hot))
	for e := a.head; e != nil; e = e.next {
		out = append(out, HotKey{Limit: e.id.limit.String(), Key: e.id.key, Hits: e.hits, Last: e.last})
	}
	a.mu.Unlock()
	slices.SortStableFunc(out, func(x, y HotKey) int {
		if c := cmp.Compare(y.Hits, x.Hits); c != 0 {
			return c
		}
		return y.Last.Compare(x.Last)
	})
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

// DenialsByLimit returns how many requests each limit denied since the
// start, keyed by limit name (a request denied by two limits counts for
// both).
func (m *Metrics) DenialsByLimit() map[string]uint64 {
	a := &m.activity
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]uint64, len(a.byLimit))
	for n, c := range a.byLimit {
		out[n.String()] = c
	}
	return out
}
