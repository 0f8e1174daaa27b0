// SPDX-License-Identifier: Apache-2.0

// Package atomicfile replaces a file's content so that, whatever happens
// (a crash, a power cut), the file holds the old content or the new,
// never a part of either: for state that a process must find again as
// it last said it was (a witness's latest cosigned checkpoint).
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, mode perm: a temporary file in its
// directory, written and synced, renamed over path, and the directory
// synced, so that the rename is durable before Write returns.
func Write(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir syncs a directory, making a file created or renamed in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
