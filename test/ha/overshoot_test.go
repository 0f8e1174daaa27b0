// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tight limits of the overshoot checks: account-creation 5 per hour
// with a burst of 2 (one token per 12 minutes), order-creation 20 per
// hour with a burst of 5 (one per 3 minutes), as the single-node
// TestRateLimitLayers in package server uses.
const (
	accountBurst = 2
	accountRA    = 720 // seconds until the next account: 1 h / 5
	orderBurst   = 5
	orderRA      = 180 // 1 h / 20
	// raSlack is how far below the exact Retry-After a denial may be:
	// the race itself takes time, which the wait shortens by.
	raSlack = 5
)

// account is an ACME account made by hand.
type account struct {
	key *ecdsa.PrivateKey
	kid string // its URL
	id  string // the last segment of its URL
}

// raceResult is the outcome of one race.
type raceResult struct {
	admitted []*rawResponse
	index    []int // the request number of each admission
	denied   []*rawResponse
	other    []string // anything but the admission or a 429
}

// race signs n requests, each with a fresh nonce fetched through hc
// (round-robin: the nonces come from every replica), then sends them all
// at once through hc and sorts the answers by status: want for an
// admission, 429 for a denial.
func race(ctx context.Context, hc *http.Client, n, want int, nonce func() (string, error), sign func(i int, nonce string) (url string, body []byte, err error)) (*raceResult, error) {
	type req struct {
		url  string
		body []byte
	}
	reqs := make([]req, n)
	for i := range n {
		nc, err := nonce()
		if err != nil {
			return nil, err
		}
		u, b, err := sign(i, nc)
		if err != nil {
			return nil, err
		}
		reqs[i] = req{u, b}
	}
	res := &raceResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-gate
			r, err := postRaw(ctx, hc, reqs[i].url, reqs[i].body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				res.other = append(res.other, fmt.Sprintf("request %d: %v", i, err))
			case r.status == want:
				res.admitted = append(res.admitted, r)
				res.index = append(res.index, i)
			case r.status == http.StatusTooManyRequests:
				res.denied = append(res.denied, r)
			default:
				res.other = append(res.other, fmt.Sprintf("request %d: %d %s: %.300s", i, r.status, r.problem.Type, r.body))
			}
		})
	}
	close(gate)
	wg.Wait()
	return res, nil
}

// raceAccounts fires n new-account requests at once, each for a new key,
// through hc; it returns the race and the accounts made.
func (cl *cluster) raceAccounts(ctx context.Context, hc *http.Client, n int) (*raceResult, []account, error) {
	keys := make([]*ecdsa.PrivateKey, n)
	for i := range keys {
		keys[i] = newKey()
	}
	url := cl.base + "/acme/new-account"
	res, err := race(ctx, hc, n, http.StatusCreated, func() (string, error) { return cl.nonce(ctx, hc) },
		func(i int, nonce string) (string, []byte, error) {
			b, err := signJWS(keys[i], "", nonce, url, []byte(`{"termsOfServiceAgreed":true}`))
			return url, b, err
		})
	if err != nil {
		return nil, nil, err
	}
	var accts []account
	for k, r := range res.admitted {
		kid := r.header.Get("Location")
		accts = append(accts, account{key: keys[res.index[k]], kid: kid, id: path.Base(kid)})
	}
	return res, accts, nil
}

// raceOrders fires n new-order requests at once for a, each for a name of
// its own, through hc.
func (cl *cluster) raceOrders(ctx context.Context, hc *http.Client, a account, n int, label string) (*raceResult, error) {
	url := cl.base + "/acme/new-order"
	return race(ctx, hc, n, http.StatusCreated, func() (string, error) { return cl.nonce(ctx, hc) },
		func(i int, nonce string) (string, []byte, error) {
			b, err := signJWS(a.key, a.kid, nonce, url, orderPayload(fmt.Sprintf("%s-%d.race.weir.test", label, i)))
			return url, b, err
		})
}

// check429 checks a rate-limit denial as package server's want429 does:
// status, type, an integer Retry-After of at least 1 second, within
// raSlack of exact (ra seconds), Link rel="help", a fresh nonce, and a
// detail naming the limit, the key and when it frees up.
func check429(t *testing.T, r *rawResponse, limit, key string, ra int) {
	t.Helper()
	if r.status != http.StatusTooManyRequests || r.problem.Type != probRateLimited {
		t.Errorf("got %d %s, want 429 rateLimited: %.300s", r.status, r.problem.Type, r.body)
		return
	}
	got, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || got < 1 {
		t.Errorf("Retry-After = %q, want whole seconds >= 1", r.header.Get("Retry-After"))
	} else if got > ra || got < ra-raSlack {
		t.Errorf("Retry-After = %d, want %d (at most %d s less for the race's duration)", got, ra, raSlack)
	}
	help := false
	for _, l := range r.header.Values("Link") {
		if strings.Contains(l, `rel="help"`) {
			help = true
		}
	}
	if !help {
		t.Errorf("no Link rel=\"help\" in %v", r.header.Values("Link"))
	}
	if r.header.Get("Replay-Nonce") == "" {
		t.Error("no Replay-Nonce on the 429")
	}
	if d := r.problem.Detail; !strings.Contains(d, limit) || !strings.Contains(d, key) || !strings.Contains(d, "retry after") {
		t.Errorf("detail %q does not name limit %q, key %q and the time it frees up", d, limit, key)
	}
}

// checkRace checks that exactly want of a race were admitted and that
// every other request was denied as check429 wants.
func checkRace(t *testing.T, what string, res *raceResult, n, want int, limit, key string, ra int) {
	t.Helper()
	for _, o := range res.other {
		t.Errorf("%s: neither admitted nor rate-limited: %s", what, o)
	}
	if len(res.admitted) != want {
		t.Errorf("%s: %d of %d concurrent requests admitted, want exactly %d", what, len(res.admitted), n, want)
	}
	if len(res.denied) != n-want {
		t.Errorf("%s: %d of %d denied, want %d", what, len(res.denied), n, n-want)
	}
	for i, r := range res.denied {
		if i >= 3 && !t.Failed() {
			break // the first few carry the checks; all have the status
		}
		check429(t, r, limit, key, ra)
	}
	t.Logf("%s: %d concurrent requests, %d admitted, %d rate-limited", what, n, len(res.admitted), len(res.denied))
}

// byReplica counts the recorded answers to path since start by replica
// and status.
func (cl *cluster) byReplica(start time.Time, p string) string {
	m := map[string]int{}
	var keys []string
	for _, r := range cl.rec.since(start) {
		if r.path != p || r.method != http.MethodPost {
			continue
		}
		k := fmt.Sprintf("replica %d %d", cl.replicaOf(r.replica), r.status)
		if r.err != "" {
			k = fmt.Sprintf("replica %d transport error", cl.replicaOf(r.replica))
		}
		if m[k] == 0 {
			keys = append(keys, k)
		}
		m[k]++
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %d; ", k, m[k])
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// replicasServing returns the replicas (1-based) that answered path
// since start.
func (cl *cluster) replicasServing(start time.Time, p string) map[int]int {
	out := map[int]int{}
	for _, r := range cl.rec.since(start) {
		if r.path == p && r.err == "" {
			out[cl.replicaOf(r.replica)]++
		}
	}
	return out
}

// countRows counts the rows of a query's result.
func countRows(ctx context.Context, cl *cluster, query string, args ...any) (int, error) {
	var n int
	err := cl.db.QueryRow(ctx, query, args...).Scan(&n)
	return n, err
}
