//go:build !unix

package sqlite

import (
	"time"
)

// cpuNow is unavailable here.
func cpuNow() time.Duration { return 0 }
