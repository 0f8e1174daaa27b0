// SPDX-License-Identifier: Apache-2.0

package server

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

// redisServer is a redis-server process of the test's own, so that it can
// be stopped and started again without touching anyone else's.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
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
	r := &redisServer{t: t, bin: bin, port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

func (r *redisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.addr(), 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("redis-server on %s did not start", r.addr())
}

// stop ends the process by its PID and waits for it.
func (r *redisServer) stop() {
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
