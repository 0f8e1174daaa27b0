// SPDX-License-Identifier: Apache-2.0

//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDB takes an exclusive flock(2) on the file path+".lock" (mode 0600),
// which Open holds until Close: the object cache (cache.go) is only true
// while no other process writes the database, so a second process opening
// it with Open (another weir serve, weir migrate) is refused. Read-only
// access (OpenExporter, backups) does not take the lock.
func lockDB(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: locking %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sqlite: %s is in use by another process (a weir serve running on this data directory?)", path)
		}
		return nil, fmt.Errorf("sqlite: locking %s: %w", path, err)
	}
	return f, nil
}
