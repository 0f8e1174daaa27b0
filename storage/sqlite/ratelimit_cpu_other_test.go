// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package sqlite

import (
	"time"
)

// cpuNow is unavailable here.
func cpuNow() time.Duration { return 0 }
