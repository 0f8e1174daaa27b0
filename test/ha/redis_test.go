// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// redisServer is a redis-server of the test's own on a free loopback
// port, stopped by its PID and started again on the same port.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts a private redis-server; the test's cleanup stops it.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	bin := requireRedis(t)
	port, err := weirproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &redisServer{t: t, bin: bin, port: port, dir: t.TempDir()}
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *redisServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

// pid is the running server's process ID, 0 when it is stopped.
func (r *redisServer) pid() int {
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// start runs redis-server on r's port (without persistence, so a restart
// starts empty) and waits until it accepts connections, for at most 10 s.
func (r *redisServer) start() error {
	cmd := exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.OpenFile(r.dir+"/redis.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.cmd, r.done = cmd, done
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			b, _ := os.ReadFile(r.dir + "/redis.log")
			return fmt.Errorf("redis-server on %s exited at start:\n%s", r.addr(), b)
		default:
		}
		if c, err := net.DialTimeout("tcp", r.addr(), 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.stop()
	return fmt.Errorf("redis-server on %s did not accept connections within 10 s", r.addr())
}

// stop sends SIGTERM to the server's PID and waits for it to exit, with
// SIGKILL after 10 s.
func (r *redisServer) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd, r.done = nil, nil
}
