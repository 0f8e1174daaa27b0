package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve raises GOGC to defaultGCPercent unless the environment
// sets GOGC, which it leaves as the runtime read it.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	if v, ok := os.LookupEnv("GOGC"); ok {
		t.Cleanup(func() { os.Setenv("GOGC", v) })
	}
	os.Unsetenv("GOGC")
	if got := tuneGC(); got != defaultGCPercent {
		t.Errorf("without GOGC: tuneGC() = %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("without GOGC: GC percent is %d, want %d", got, defaultGCPercent)
	}

	// With GOGC in the environment, the runtime's value (here 100, as if
	// read from GOGC=100 at start) is kept.
	t.Setenv("GOGC", "100")
	if got := tuneGC(); got != 100 {
		t.Errorf("with GOGC=100: tuneGC() = %d, want 100", got)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100: GC percent is %d, want 100", got)
	}
}
