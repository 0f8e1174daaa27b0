// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// TestRestoreRowsOrder: Restore inserts the members that still count in
// the order of the buckets table's primary key (key as stored, then
// member), whatever the order of the buckets and of their members, each
// with the expiry its window gives (a window of 0 keeps the member's own);
// a member past its window is left out.
func TestRestoreRowsOrder(t *testing.T) {
	now := time.Now().UnixMicro()
	win := (168 * time.Hour).Microseconds()
	buckets := []ratelimit.CountBucket{
		{Key: "duplicate-certificate:9:zz", Window: win, Members: map[string]int64{"o3": now - 10, "o1": now - 20, "gone": now - win - 1}},
		{Key: "pending-authorizations:1", Window: 0, Members: map[string]int64{"a2": now + 100, "a1": now + 50}},
		{Key: "duplicate-certificate:1:aa", Window: win, Members: map[string]int64{"o9": now - 5}},
	}
	rows := restoreRows(buckets, now)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s|%s|%d", r.key, r.member, r.expires-r.ts))
	}
	want := []string{
		"1:aa:duplicate-certificate|o9|" + fmt.Sprint(win),
		"1:pending-authorizations|a1|0",
		"1:pending-authorizations|a2|0",
		"9:zz:duplicate-certificate|o1|" + fmt.Sprint(win),
		"9:zz:duplicate-certificate|o3|" + fmt.Sprint(win),
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkRateLimitRestore restores 220,000 duplicate-certificate
// members, one per bucket, in no order (as the loader hands them over), into
// a new limiter file: the start of a weir whose limiter file is new, with
// what a million certificates issued over 30 days hold in a 7-day window.
func BenchmarkRateLimitRestore(b *testing.B) {
	const n = 220000
	now := time.Now()
	buckets := make([]ratelimit.CountBucket, n)
	for i := range buckets {
		key := ratelimit.BucketKey(ratelimit.DuplicateCertificate, fmt.Sprintf("%d:%x", i/50, uint64(i)*0x9e3779b97f4a7c15))
		buckets[i] = ratelimit.CountBucket{Key: key, Window: (168 * time.Hour).Microseconds(),
			Members: map[string]int64{fmt.Sprintf("order%07d", i): now.Add(-time.Duration(i) * time.Second).UnixMicro()}}
	}
	// The loader hands the buckets over in a map's order.
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { buckets[i], buckets[j] = buckets[j], buckets[i] })
	for i := 0; b.Loop(); i++ {
		src, err := OpenRateLimit(context.Background(), filepath.Join(b.TempDir(), fmt.Sprintf("rl%d.db", i)), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := src.Restore(context.Background(), buckets); err != nil {
			b.Fatal(err)
		}
		if err := src.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/member")
}
