// SPDX-License-Identifier: Apache-2.0

//go:build linux || darwin || freebsd

package server

import "syscall"

// freeBytes returns the bytes of dir's file system that an unprivileged
// process may still use.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
