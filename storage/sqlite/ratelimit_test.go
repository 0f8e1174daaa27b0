// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// openRateLimitAt opens the rate-limit source at path and closes it when
// the test ends.
func openRateLimitAt(t testing.TB, path string, now func() time.Time) *RateLimitSource {
	t.Helper()
	s, err := OpenRateLimit(t.Context(), path, now)
	if err != nil {
		t.Fatalf("OpenRateLimit(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestRateLimitContract(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, now func() time.Time) ratelimit.Source {
		return openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), now)
	})
}

// Limits of the tests below: 20 per hour, burst 5 (T = 180 s); 5 per
// 168 h; 3 pending.
var (
	rlOrder   = ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}
	rlDup     = ratelimit.Limit{Max: 5, Window: 168 * time.Hour}
	rlPending = ratelimit.Limit{Max: 3}
)

// mustApply applies ops as one batch, which must commit.
func mustApply(t *testing.T, s *RateLimitSource, ops ...ratelimit.Op) *ratelimit.BatchResult {
	t.Helper()
	res, err := s.Apply(t.Context(), &ratelimit.Batch{Ops: ops})
	if err != nil || !res.Committed {
		t.Fatalf("Apply = %+v, %v; want committed", res, err)
	}
	return res
}

// Kinds of row for countRows.
const (
	rateRows   = "member = ''"
	memberRows = "member != ''"
)

// countRows returns the number of rows of the kind given.
func countRows(t *testing.T, s *RateLimitSource, kind string) int {
	t.Helper()
	var n int
	if err := s.r.QueryRowContext(t.Context(), "SELECT count(*) FROM buckets WHERE "+kind).Scan(&n); err != nil {
		t.Fatalf("counting rows where %s: %v", kind, err)
	}
	return n
}

func TestRateLimitStoredRows(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), clock.Now)
	t0 := clock.Now().UnixMicro()
	exp := t0 + time.Hour.Microseconds()
	mustApply(t, s,
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: rlOrder, Cost: 2},
		ratelimit.Op{Kind: ratelimit.OpCheck, Key: "order-creation:b", Limit: rlOrder},
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: "duplicate-certificate:a:ff", Limit: rlDup, Member: "s1"},
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: "pending-authorizations:a", Limit: rlPending, Member: "z1", MemberTime: exp},
	)
	var tat int64
	if err := s.r.QueryRowContext(t.Context(), `SELECT ts FROM buckets WHERE key = 'a:order-creation' AND member = ''`).Scan(&tat); err != nil {
		t.Fatal(err)
	}
	if want := t0 + (360 * time.Second).Microseconds(); tat != want {
		t.Errorf("stored TAT = %d, want %d", tat, want)
	}
	if n := countRows(t, s, rateRows); n != 1 {
		t.Errorf("%d rate buckets stored, want 1 (a check writes nothing)", n)
	}
	for _, m := range []struct {
		member      string
		ts, expires int64
	}{
		{"s1", t0, t0 + (168 * time.Hour).Microseconds()},
		{"z1", exp, exp},
	} {
		var ts, expires int64
		if err := s.r.QueryRowContext(t.Context(), `SELECT ts, expires FROM buckets WHERE member = ?`, m.member).Scan(&ts, &expires); err != nil {
			t.Fatalf("member %s: %v", m.member, err)
		}
		if ts != m.ts || expires != m.expires {
			t.Errorf("member %s: ts %d expires %d, want %d %d", m.member, ts, expires, m.ts, m.expires)
		}
	}

	// A refund back to full deletes the bucket's row; removing the last
	// member deletes the count bucket.
	mustApply(t, s,
		ratelimit.Op{Kind: ratelimit.OpRefund, Key: "order-creation:a", Limit: rlOrder, Cost: 2},
		ratelimit.Op{Kind: ratelimit.OpRemove, Key: "pending-authorizations:a", Limit: rlPending, Member: "z1"},
	)
	if n := countRows(t, s, rateRows); n != 0 {
		t.Errorf("%d rate buckets stored after a full refund, want 0", n)
	}
	if n := countRows(t, s, memberRows); n != 1 {
		t.Errorf("%d members stored after a remove, want 1", n)
	}
}

func TestRateLimitSweep(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), clock.Now)
	ctx := t.Context()
	t0 := clock.Now()
	const n = 23 // rows of each sort: several chunks of 5, and a partial one

	// At t0: n short rate buckets (full again at t0+180 s) and n long ones
	// (t0+900 s); n certificates issued at t0 (counting until t0+168 h);
	// n pending authorizations expiring at t0+10 min and n at t0+1 h.
	for i := range n {
		mustApply(t, s,
			ratelimit.Op{Kind: ratelimit.OpSpend, Key: fmt.Sprintf("order-creation:short-%d", i), Limit: rlOrder, Cost: 1},
			ratelimit.Op{Kind: ratelimit.OpSpend, Key: fmt.Sprintf("order-creation:long-%d", i), Limit: rlOrder, Cost: 5},
			ratelimit.Op{Kind: ratelimit.OpAdd, Key: fmt.Sprintf("duplicate-certificate:a:%d", i%5), Limit: rlDup, Member: fmt.Sprint("s", i)},
			ratelimit.Op{Kind: ratelimit.OpAdd, Key: fmt.Sprintf("pending-authorizations:a%d", i%8), Limit: rlPending, Member: fmt.Sprint("soon", i), MemberTime: t0.Add(10 * time.Minute).UnixMicro()},
			ratelimit.Op{Kind: ratelimit.OpAdd, Key: fmt.Sprintf("pending-authorizations:b%d", i), Limit: rlPending, Member: fmt.Sprint("late", i), MemberTime: t0.Add(time.Hour).UnixMicro()},
		)
	}
	sweep := func(wantDeleted, wantBuckets, wantMembers int) {
		t.Helper()
		got, err := s.sweep(ctx, 5)
		if err != nil {
			t.Fatalf("sweep: %v", err)
		}
		if got != wantDeleted {
			t.Errorf("at t0+%v: sweep deleted %d rows, want %d", clock.Now().Sub(t0), got, wantDeleted)
		}
		if b, m := countRows(t, s, rateRows), countRows(t, s, memberRows); b != wantBuckets || m != wantMembers {
			t.Errorf("at t0+%v: %d buckets and %d members left, want %d and %d", clock.Now().Sub(t0), b, m, wantBuckets, wantMembers)
		}
	}
	sweep(0, 2*n, 3*n)
	clock.Advance(180*time.Second - time.Microsecond)
	sweep(0, 2*n, 3*n)
	clock.Advance(time.Microsecond) // a TAT equal to now is full
	sweep(n, n, 3*n)
	clock.Advance(10*time.Minute - 180*time.Second) // a member expiring at now is gone
	sweep(n, n, 2*n)
	clock.Advance(time.Hour)
	sweep(2*n, 0, n)
	clock.Advance(168*time.Hour - time.Hour - 10*time.Minute - time.Microsecond)
	sweep(0, 0, n)
	clock.Advance(time.Microsecond)
	sweep(n, 0, 0)

	// Sweeping changed no decision: the buckets are as fresh as before.
	res := mustApply(t, s,
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:long-0", Limit: rlOrder, Cost: 5},
		ratelimit.Op{Kind: ratelimit.OpCount, Key: "duplicate-certificate:a:0", Limit: rlDup},
	)
	if r := res.Results; r[0].Remaining != 0 || r[1].Remaining != 4 {
		t.Errorf("after sweeping: %+v, want 0 and 4 remaining", r)
	}

	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Sweep(ctx2); !errors.Is(err, context.Canceled) {
		t.Errorf("Sweep with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestRateLimitRun(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), clock.Now)
	if err := s.Run(t.Context(), 0); err == nil {
		t.Error("Run with a zero interval = nil, want an error")
	}
	mustApply(t, s, ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: rlOrder, Cost: 1})
	clock.Advance(time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for countRows(t, s, rateRows) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("Run did not sweep the idle bucket within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil after cancel", err)
	}
}

func TestRateLimitReopen(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "ratelimit.db")
	s, err := OpenRateLimit(t.Context(), path, clock.Now)
	if err != nil {
		t.Fatalf("OpenRateLimit: %v", err)
	}
	t0 := clock.Now().UnixMicro()
	exp := t0 + time.Hour.Microseconds()
	mustApply(t, s,
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: rlOrder, Cost: 5},
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: "duplicate-certificate:a:ff", Limit: rlDup, Member: "s1"},
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: "pending-authorizations:a", Limit: rlPending, Member: "z1", MemberTime: exp},
	)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	clock.Advance(time.Minute)
	s = openRateLimitAt(t, path, clock.Now)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	snap, err := s.Get(t.Context(), []string{"order-creation:a", "duplicate-certificate:a:ff", "pending-authorizations:a"})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got, want := snap.Buckets["order-creation:a"].TAT, t0+(900*time.Second).Microseconds(); got != want {
		t.Errorf("TAT after reopening = %d, want %d", got, want)
	}
	if got := snap.Buckets["duplicate-certificate:a:ff"].Members["s1"]; got != t0 {
		t.Errorf("member s1 after reopening = %d, want %d", got, t0)
	}
	if got := snap.Buckets["pending-authorizations:a"].Members["z1"]; got != exp {
		t.Errorf("member z1 after reopening = %d, want %d", got, exp)
	}
	res, err := s.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{
		{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: rlOrder, Cost: 1},
	}})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if r := res.Results[0]; res.Committed || r.RetryAfter != (120*time.Second).Microseconds() {
		t.Errorf("spend after reopening = %+v, want denied, retry after 120 s", r)
	}
	var name string
	if err := s.r.QueryRowContext(t.Context(), `SELECT name FROM schema_migrations WHERE version = 1`).Scan(&name); err != nil || name != "init" {
		t.Errorf("schema_migrations version 1 = %q, %v; want init", name, err)
	}
}

func TestRateLimitSchemaTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratelimit.db")
	s := openRateLimitAt(t, path, nil)
	if _, err := s.w.ExecContext(t.Context(), `INSERT INTO schema_migrations VALUES (9999, 'future', '')`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := OpenRateLimit(t.Context(), path, nil)
	if tooNew, ok := errors.AsType[*SchemaTooNewError](err); !ok || tooNew.Database != 9999 {
		t.Errorf("OpenRateLimit of a newer schema = %v, want a *SchemaTooNewError", err)
	}
}

func TestStorageKey(t *testing.T) {
	// unstore is the inverse of storageKey, proving it one-to-one.
	unstore := func(s string) string {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return s
		}
		return s[i+1:] + ":" + s[:i]
	}
	for key, want := range map[string]string{
		"order-creation:acct-42":                  "acct-42:order-creation",
		"failed-validation:acct-42:*.example.com": "acct-42:*.example.com:failed-validation",
		"global:2001:db8:1:2::/64":                "2001:db8:1:2::/64:global",
		"no-colon":                                "no-colon",
		":leading":                                "leading:",
		"trailing:":                               ":trailing",
		"a::b":                                    ":b:a",
		":":                                       ":",
	} {
		got := storageKey(key)
		if got != want {
			t.Errorf("storageKey(%q) = %q, want %q", key, got, want)
		}
		if back := unstore(got); back != key {
			t.Errorf("storageKey(%q) = %q, which maps back to %q", key, got, back)
		}
	}
}

// TestRateLimitExpiredMembers checks how a batch writing a count bucket
// treats members that have expired: a few are left for Sweep, many are
// deleted at once, and one re-added is stored anew either way.
func TestRateLimitExpiredMembers(t *testing.T) {
	limit := ratelimit.Limit{Max: 100}
	for _, expired := range []int{pruneAtExpired - 1, pruneAtExpired} {
		t.Run(fmt.Sprint(expired, " expired"), func(t *testing.T) {
			clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s := openRateLimitAt(t, filepath.Join(t.TempDir(), "ratelimit.db"), clock.Now)
			const key = "pending-authorizations:a"
			soon := clock.Now().Add(time.Minute).UnixMicro()
			var ops []ratelimit.Op
			for i := range expired {
				ops = append(ops, ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: limit, Member: fmt.Sprint("old-", i), MemberTime: soon})
			}
			mustApply(t, s, ops...)
			clock.Advance(2 * time.Minute)
			later := clock.Now().Add(time.Hour).UnixMicro()
			res := mustApply(t, s,
				ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: limit, Member: "new", MemberTime: later},
				ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: limit, Member: "old-0", MemberTime: later},
			)
			if r := res.Results; !r[0].Applied || !r[1].Applied || r[1].Remaining != 98 {
				t.Errorf("adds = %+v, want both applied, 98 left", r)
			}
			wantRows := 2
			if expired < pruneAtExpired {
				wantRows = expired + 1 // old-0 is updated in place
			}
			if n := countRows(t, s, memberRows); n != wantRows {
				t.Errorf("%d member rows, want %d", n, wantRows)
			}
			snap, err := s.Get(t.Context(), []string{key})
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.Buckets[key].Members; len(got) != 2 || got["new"] != later || got["old-0"] != later {
				t.Errorf("members = %v, want new and old-0 at %d", got, later)
			}
		})
	}
}
