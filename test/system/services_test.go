// SPDX-License-Identifier: Apache-2.0

package system

import (
	"testing"

	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// postgresSchema returns a DSN on a fresh schema of the test server.
func postgresSchema(t *testing.T) string {
	t.Helper()
	_, dsn := pgtest.Schema(t, "weir_e2e_")
	return dsn
}
