package ha_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// runHint says how to run the package's tests.
const runHint = "WEIR_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test -count=1 -v ./test/ha/ (with redis-server installed)"

var (
	// binDir holds the weir binary built for this run of the package.
	binDir    string
	buildOnce sync.Once
	weirBin   string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weir-ha-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// weirBinary builds weir once per run of the package (the first test
// that needs it pays) and returns its path.
func weirBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		weirBin, buildErr = weirproc.Build(ctx, binDir)
		if buildErr == nil {
			t.Logf("built weir in %s", time.Since(start).Round(time.Millisecond))
		}
	})
	if buildErr != nil {
		t.Fatalf("building weir: %v", buildErr)
	}
	return weirBin
}

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
