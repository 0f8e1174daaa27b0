// SPDX-License-Identifier: Apache-2.0

package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/sqlite"
)

// TestRateLimitRestoreFresh: a limiter file this open created is Fresh;
// the members Restore puts back count (a sixth certificate is denied
// against five restored) and survive a reopen, which is not Fresh.
func TestRateLimitRestoreFresh(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ratelimit.db")
	src, err := sqlite.OpenRateLimit(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !src.Fresh() {
		t.Error("a new file is not Fresh")
	}
	dup := ratelimit.Limit{Max: 5, Window: 168 * time.Hour}
	key := ratelimit.BucketKey(ratelimit.DuplicateCertificate, "1:set")
	now := time.Now()
	m := map[string]int64{"old": now.Add(-200 * time.Hour).UnixMicro()}
	for _, id := range []string{"o1", "o2", "o3", "o4", "o5"} {
		m[id] = now.Add(-time.Hour).UnixMicro()
	}
	if err := src.Restore(ctx, []ratelimit.CountBucket{{Key: key, Window: dup.WindowMicros(), Members: m}}); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	src, err = sqlite.OpenRateLimit(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Fresh() {
		t.Error("a reopened file is Fresh")
	}
	res, err := src.Apply(ctx, &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpAdd, Key: key, Limit: dup, Member: "o6"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || res.Results[0].Remaining != 0 {
		t.Errorf("a sixth certificate after restoring five: %+v, want denied", res.Results[0])
	}
}
