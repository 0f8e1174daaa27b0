// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/weir-pki/weir/internal/weirproc"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// runHint says how to run the package's tests.
const runHint = "WEIR_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test -count=1 -v ./test/ha/ (with redis-server installed)"

// builder builds the weir binary once per run of the package (the first
// test that needs it pays).
var builder weirproc.Builder

func TestMain(m *testing.M) { os.Exit(builder.RunTests(m)) }

// missing skips the test with how to run it, or fails it under CI=true.
func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true; run: %s", what, runHint)
	}
	t.Skipf("%s missing; to run: %s", what, runHint)
}

// requireRedis returns the path of redis-server.
func requireRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		missing(t, "redis-server (apt-get install -y redis-server)")
	}
	return bin
}

// requirePostgres returns a DSN on a fresh schema of the server named by
// WEIR_TEST_POSTGRES_DSN, dropped when the test ends.
func requirePostgres(t *testing.T) (schema, dsn string) {
	t.Helper()
	if os.Getenv(pgtest.EnvDSN) == "" {
		missing(t, pgtest.EnvDSN)
	}
	return pgtest.Schema(t, "weir_ha_")
}
