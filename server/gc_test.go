// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve raises GOGC to defaultGCPercent and sets the soft
// memory limit to defaultMemoryLimit unless the environment sets GOGC or
// GOMEMLIMIT, which it leaves as the runtime read them.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(noMemoryLimit)
	t.Cleanup(func() { debug.SetGCPercent(prev); debug.SetMemoryLimit(prevLimit) })

	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Cleanup(func() { os.Setenv(k, v) })
		}
		os.Unsetenv(k)
	}
	if got, lim := TuneGC(); got != defaultGCPercent || lim != defaultMemoryLimit {
		t.Errorf("without GOGC and GOMEMLIMIT: TuneGC() = %d, %d; want %d, %d", got, lim, defaultGCPercent, defaultMemoryLimit)
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("without GOGC: GC percent is %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetMemoryLimit(noMemoryLimit); got != defaultMemoryLimit {
		t.Errorf("without GOMEMLIMIT: memory limit is %d, want %d", got, defaultMemoryLimit)
	}

	// With GOGC and GOMEMLIMIT in the environment, the runtime's values
	// (here 100 and none, as if read from GOGC=100 and GOMEMLIMIT=off at
	// start) are kept.
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "off")
	if got, lim := TuneGC(); got != 100 || lim != noMemoryLimit {
		t.Errorf("with GOGC=100 GOMEMLIMIT=off: TuneGC() = %d, %d; want 100, %d", got, lim, int64(noMemoryLimit))
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100: GC percent is %d, want 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != noMemoryLimit {
		t.Errorf("with GOMEMLIMIT=off: memory limit is %d, want none", got)
	}
}
