// SPDX-License-Identifier: Apache-2.0

//go:build unix

package sqlite

import (
	"syscall"
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
