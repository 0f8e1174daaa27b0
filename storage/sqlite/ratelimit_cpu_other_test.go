//go:build !unix

package sqlite

import (
	"testing"
	"time"
)

// cpuNow is unavailable here.
func cpuNow() time.Duration { return 0 }

// reportCPU reports nothing here.
func reportCPU(*testing.B, time.Duration) {}
