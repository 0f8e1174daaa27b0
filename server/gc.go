// SPDX-License-Identifier: Apache-2.0

package server

import (
	"math"
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target (GOGC) that serve
// sets when the environment sets none. weir's live heap is small (tens of
// MiB), so Go's default of 100 collects very often under load: profiles
// of weir-load at concurrency 8 and 32 showed 400 cut server CPU per
// certificate by 5 to 15%, for some 20 MiB more RSS.
const defaultGCPercent = 400

// defaultMemoryLimit is the soft memory limit (GOMEMLIMIT) that serve sets
// when the environment sets none. With GOGC 400 alone the heap grows to
// five times its live size: the CRL regeneration at start of a store of a
// million certificates (50,000 revoked) holds about 45 MiB while it
// encodes, and the heap then reached 280 MiB of RSS. Under this limit
// the collector runs early instead once the Go runtime's memory nears
// 100 MiB, which leaves room within a 150 MiB budget for what is not
// Go's (the binary's pages, SQLite's page caches). It is soft: a live
// heap larger than it is kept, the collector then using at most about
// half of the CPU (Go's GC CPU limiter) until the heap shrinks; a store
// whose CRL is much larger should set GOMEMLIMIT higher.
const defaultMemoryLimit = 100 << 20

// TuneGC is what weir serve does first: it sets the collector's target
// to defaultGCPercent unless GOGC is set in the environment, which wins
// (GOGC=100 restores Go's default), and the soft memory limit to
// defaultMemoryLimit unless GOMEMLIMIT is set (GOMEMLIMIT=off removes
// it). It returns the target and the limit in effect.
func TuneGC() (int, int64) {
	limit := debug.SetMemoryLimit(-1)
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		limit = defaultMemoryLimit
		debug.SetMemoryLimit(limit)
	}
	if _, ok := os.LookupEnv("GOGC"); ok {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p, limit
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent, limit
}

// noMemoryLimit is what debug.SetMemoryLimit reports when none is set.
const noMemoryLimit = math.MaxInt64
