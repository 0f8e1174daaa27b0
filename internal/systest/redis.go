// SPDX-License-Identifier: Apache-2.0

package systest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/acmeenv"
)

// Redis is a redis-server process of the test's own, so that it can be
// stopped, paused and started again without touching anyone else's.
type Redis struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
}

// StartRedis starts a redis-server on a free loopback port, stopped when
// the test ends. Without redis-server the test is skipped, or fails under
// CI=true.
func StartRedis(t *testing.T) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is required under CI=true (apt-get install -y redis-server)")
		}
		t.Skip("redis-server not installed; apt-get install -y redis-server to run the Redis failure test")
	}
	ln := acmeenv.ListenLoopback(t)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &Redis{t: t, bin: bin, port: port}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

// Start starts the server again, empty, on its port (after Stop or Kill9),
// and waits until it accepts connections.
func (r *Redis) Start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.Addr(), 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("redis-server on %s did not start", r.Addr())
}

// Stop ends the process by its PID (SIGTERM, then SIGKILL after 10 s) and
// waits for it.
func (r *Redis) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}

// Signal sends sig to the process (SIGSTOP and SIGCONT pause and resume
// it).
func (r *Redis) Signal(sig syscall.Signal) {
	r.t.Helper()
	if err := syscall.Kill(r.cmd.Process.Pid, sig); err != nil {
		r.t.Fatalf("signal %v to redis-server %d: %v", sig, r.cmd.Process.Pid, err)
	}
}

// Kill9 kills the process with SIGKILL and waits for it; Start makes a
// new, empty one on the same port.
func (r *Redis) Kill9() {
	r.t.Helper()
	r.Signal(syscall.SIGKILL)
	_ = r.cmd.Wait()
	r.cmd = nil
}
