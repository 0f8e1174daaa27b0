//go:build unix

package sqlite

import (
	"syscall"
	"testing"
	"time"
)

// cpuNow returns the user and system CPU time of the process.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per op since start, which,
// unlike ns/op, hardly depends on what else the machine is running.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuNow()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}
