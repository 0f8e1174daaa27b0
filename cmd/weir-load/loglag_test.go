// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestLogLagP99: the lag's p99 over a run is read from the histogram's
// buckets, as differences from before the run; the oldest pending wait
// is read too; a /metrics without the histogram is an error.
func TestLogLagP99(t *testing.T) {
	text := func(counts ...int) string {
		les := []string{"0.5", "1", "2", "+Inf"}
		var b strings.Builder
		b.WriteString("# HELP weir_log_integration_lag_seconds x\n# TYPE weir_log_integration_lag_seconds histogram\n")
		for i, le := range les {
			b.WriteString(`weir_log_integration_lag_seconds_bucket{le="` + le + `"} ` + strconv.Itoa(counts[i]) + "\n")
		}
		b.WriteString("weir_log_oldest_pending_seconds 0.25\n")
		return b.String()
	}
	before, err := parseLag(strings.NewReader(text(10, 10, 10, 10)))
	if err != nil {
		t.Fatal(err)
	}
	// Since before: 50 at ≤ 0.5 s, 45 more at ≤ 1 s, 5 at ≤ 2 s: the
	// 99th of 100 falls in the ≤ 2 s bucket.
	after, err := parseLag(strings.NewReader(text(60, 105, 110, 110)))
	if err != nil {
		t.Fatal(err)
	}
	if got := after.p99Since(before); got != 2 {
		t.Errorf("p99 = %g, want 2", got)
	}
	if after.oldest != 0.25 {
		t.Errorf("oldest = %g", after.oldest)
	}
	if got := after.p99Since(after); got != 0 {
		t.Errorf("p99 of no entries = %g, want 0", got)
	}
	late, _ := parseLag(strings.NewReader(text(10, 10, 10, 20)))
	if got := late.p99Since(before); !math.IsInf(got, 1) {
		t.Errorf("p99 past the last bucket = %g, want +Inf", got)
	}
	if _, err := parseLag(strings.NewReader("weir_other 1\n")); err == nil {
		t.Error("no histogram: no error")
	}
}
