// SPDX-License-Identifier: Apache-2.0

package server

import (
	"testing"

	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/storage/sqlite"
)

// snapshotDB reads every table of e's SQLite store (systest.Snapshot).
func snapshotDB(t *testing.T, e *testEnv) systest.Snapshot {
	t.Helper()
	return systest.SnapshotDB(t, e.srv.store.(*sqlite.Store).DB())
}
