// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package sqlite

import "os"

// lockDB does nothing where flock(2) is missing: there, keep to one process
// per database yourself (see lock.go).
func lockDB(path string) (*os.File, error) { return nil, nil }
