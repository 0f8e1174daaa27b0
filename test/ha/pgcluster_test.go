// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// pgCluster is a private PostgreSQL cluster of the test's own: initdb'd
// in a temporary directory, trust authentication, listening on 127.0.0.1
// at a free port with its Unix socket inside the directory, run by the
// postgres OS user when the test runs as root.
type pgCluster struct {
	t       *testing.T
	binDir  string
	dir     string // owned by the cluster's user
	data    string
	logFile string
	port    int
	asUser  string // "" to run as this process's user
}

// startPGCluster makes and starts a private cluster; the test's cleanup
// stops it (pg_ctl stop -m fast) and removes it. Without the server
// binaries the test is skipped (fails under CI=true).
func startPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(matches) == 0 {
		missing(t, "the PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb, pg_ctl; apt-get install -y postgresql)")
	}
	sort.Slice(matches, func(i, j int) bool { return pgVersion(matches[i]) > pgVersion(matches[j]) })
	binDir := filepath.Dir(matches[0])
	if _, err := os.Stat(filepath.Join(binDir, "initdb")); err != nil {
		missing(t, "initdb beside "+matches[0])
	}
	c := &pgCluster{t: t, binDir: binDir}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		if _, err := user.Lookup("postgres"); err != nil {
			missing(t, "the postgres OS user (to run a private cluster as root)")
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			missing(t, "runuser (util-linux)")
		}
		c.asUser = "postgres"
	}
	// Not t.TempDir: its parents are 0700 root, which the postgres user
	// cannot traverse.
	dir, err := os.MkdirTemp("", "weir-ha-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if c.asUser != "" {
		u, _ := user.Lookup(c.asUser)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	c.dir, c.data, c.logFile = dir, filepath.Join(dir, "data"), filepath.Join(dir, "postgres.log")
	c.port, err = weirproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if out, err := c.run(ctx, "initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("stopping the private PostgreSQL: %v", err)
		}
	})
	t.Logf("private PostgreSQL (%s) on 127.0.0.1:%d in %s", binDir, c.port, dir)
	return c
}

// pgVersion is the major version in a /usr/lib/postgresql/N/bin path.
func pgVersion(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// dsn is the cluster's postgres database.
func (c *pgCluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&application_name=weir_ha", c.port)
}

// run runs one of the cluster's binaries as its user.
func (c *pgCluster) run(ctx context.Context, tool string, args ...string) ([]byte, error) {
	path := filepath.Join(c.binDir, tool)
	var cmd *exec.Cmd
	if c.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = c.dir
	cmd.WaitDelay = 5 * time.Second
	return cmd.CombinedOutput()
}

// start starts the server and waits (pg_ctl -w, at most 60 s) until it
// accepts connections.
func (c *pgCluster) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=100", c.port, c.dir)
	out, err := c.run(ctx, "pg_ctl", "-D", c.data, "-l", c.logFile, "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, weirproc.TailFile(c.logFile, 20))
	}
	return nil
}

// stop stops the server with pg_ctl stop -m fast and waits (at most
// 60 s) until it is down.
func (c *pgCluster) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err != nil {
		return nil // not running
	}
	out, err := c.run(ctx, "pg_ctl", "-D", c.data, "-m", "fast", "-w", "-t", "60", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// postmasterPID reads the server's PID from postmaster.pid, 0 if none.
func (c *pgCluster) postmasterPID() int {
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscanf(string(b), "%d", &pid)
	return pid
}
