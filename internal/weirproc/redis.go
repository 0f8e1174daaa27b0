// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Redis is a private redis-server: loopback only, no persistence.
type Redis struct {
	PID     int
	Addr    string // 127.0.0.1:PORT
	LogPath string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// StartRedis starts redis-server on a free loopback port with dir as its
// working directory (created 0700; its log goes to dir/redis.log) and
// waits, at most 10 s, until it accepts connections. Without
// redis-server on PATH the error wraps exec.ErrNotFound.
func StartRedis(ctx context.Context, dir string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("weirproc: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port), LogPath: filepath.Join(dir, "redis.log"), exited: make(chan struct{})}
	logf, err := os.OpenFile(r.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := r.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	r.PID = r.cmd.Process.Pid
	go func() {
		r.waitErr = r.cmd.Wait()
		logf.Close()
		close(r.exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", r.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			return r, nil
		}
		var why error
		select {
		case <-r.exited:
			why = fmt.Errorf("redis-server exited during start-up: %v", r.waitErr)
		case <-ctx.Done():
			why = ctx.Err()
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				why = fmt.Errorf("redis-server on %s did not accept connections within 10s", r.Addr)
			}
		}
		if why != nil {
			_ = r.Stop(5 * time.Second)
			return nil, fmt.Errorf("%w:\n%s", why, TailFile(r.LogPath, 10))
		}
	}
}

// CPUTicks is redis-server's user+system CPU time in clock ticks.
func (r *Redis) CPUTicks() (int64, error) { return ProcCPU(strconv.Itoa(r.PID)) }

// Stop sends SIGTERM to the PID and waits; after grace it sends SIGKILL.
func (r *Redis) Stop(grace time.Duration) error {
	select {
	case <-r.exited:
		return nil
	default:
	}
	_ = syscall.Kill(r.PID, syscall.SIGTERM)
	select {
	case <-r.exited:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(r.PID, syscall.SIGKILL)
	select {
	case <-r.exited:
		return fmt.Errorf("redis-server (pid %d) did not stop within %s of SIGTERM; killed", r.PID, grace)
	case <-time.After(30 * time.Second):
		return fmt.Errorf("redis-server (pid %d) did not exit after SIGKILL", r.PID)
	}
}
