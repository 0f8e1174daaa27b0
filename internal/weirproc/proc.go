// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Options start one weir server.
type Options struct {
	// Bin is the weir binary (Build).
	Bin string
	// DataDir is weir's data directory, created 0700 if missing. The
	// configuration goes there as weir.yaml.
	DataDir string
	// Config is the YAML configuration, written to DataDir/weir.yaml
	// (0600) as is: the caller sets data-dir, server.listen and the rest.
	Config string
	// Listen is the host:port weir listens on (server.listen); weir is
	// ready when GET https://Listen/directory answers 200.
	Listen string
	// Args are extra arguments after `serve -config FILE` (-pprof ADDR).
	Args []string
	// Env is extra environment (KEY=VALUE) on top of this process's.
	Env []string
	// LogPath receives weir's stdout and stderr, appended; default
	// DataDir/weir-server.log.
	LogPath string
	// ReadyTimeout bounds the wait for readiness; default 60s.
	ReadyTimeout time.Duration
}

// ConfigPath is where Start writes o.Config.
func (o Options) ConfigPath() string { return filepath.Join(o.DataDir, "weir.yaml") }

// Proc is a weir server running as a child process.
type Proc struct {
	PID     int
	Listen  string         // host:port of its ACME listener
	Base    string         // "https://" + Listen
	DataDir string         // its data directory
	LogPath string         // its stdout and stderr
	Roots   *x509.CertPool // the root of DataDir/root.pem

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Start writes the configuration, starts `weir serve` and waits until it
// serves its directory over HTTPS with the root in DataDir/root.pem. The
// kernel sends it SIGTERM if the thread that started it dies. When it
// does not become ready, Start stops it and returns an error that ends
// with the tail of its log. ctx bounds the wait for readiness only; the
// process runs until Stop or Kill.
func Start(ctx context.Context, o Options) (*Proc, error) {
	if o.Bin == "" || o.DataDir == "" || o.Listen == "" {
		return nil, errors.New("weirproc: Options need Bin, DataDir and Listen")
	}
	if o.LogPath == "" {
		o.LogPath = filepath.Join(o.DataDir, "weir-server.log")
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, err
	}
	cfgPath := o.ConfigPath()
	if err := os.WriteFile(cfgPath, []byte(o.Config), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Bin, append([]string{"serve", "-config", cfgPath}, o.Args...)...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	p := &Proc{Listen: o.Listen, Base: "https://" + o.Listen, DataDir: o.DataDir, LogPath: o.LogPath}
	if err := p.spawn(cmd, o.Bin, func(err error) error { return err }); err != nil {
		return nil, err
	}
	if err := p.waitReady(ctx, o.ReadyTimeout); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%w (pid %d, log %s):\n%s", err, p.PID, p.LogPath, p.Tail(20))
	}
	return p, nil
}

// spawn starts cmd as p (its PID, its waiter) with its output appended
// to p.LogPath; if the starting process dies, the kernel sends it
// SIGTERM. waited maps cmd.Wait's error into p.waitErr.
func (p *Proc) spawn(cmd *exec.Cmd, bin string, waited func(error) error) error {
	logf, err := os.OpenFile(p.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	p.PID, p.cmd, p.exited = cmd.Process.Pid, cmd, make(chan struct{})
	go func() {
		p.waitErr = waited(cmd.Wait())
		logf.Close()
		close(p.exited)
	}()
	return nil
}

// waitReady waits for root.pem and then for the directory.
func (p *Proc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	rootPath := filepath.Join(p.DataDir, "root.pem")
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("weir exited during start-up: %v", p.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("weir did not become ready within %s", timeout)
		}
		if p.Roots == nil {
			if pem, err := os.ReadFile(rootPath); err == nil {
				pool := x509.NewCertPool()
				if pool.AppendCertsFromPEM(pem) {
					p.Roots = pool
				}
			}
		}
		if p.Roots != nil {
			c := p.HTTPClient()
			c.Timeout = 2 * time.Second
			res, err := c.Get(p.Base + "/directory")
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			c.CloseIdleConnections()
			if err == nil && res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// HTTPClient returns a client that trusts p.Roots and reaches p's own
// listener whatever host a URL names (replicas share server.external-url).
func (p *Proc) HTTPClient() *http.Client {
	listen := p.Listen
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		Proxy:           nil,
		TLSClientConfig: &tls.Config{RootCAs: p.Roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, listen)
		},
	}}
}

// Stop sends SIGTERM to the PID and waits for the exit; after grace it
// sends SIGKILL. It returns the exit's error (nil for a clean exit), or
// an error saying it had to kill.
func (p *Proc) Stop(grace time.Duration) error {
	if p == nil || p.cmd == nil {
		return errNotStarted
	}
	select {
	case <-p.exited:
		return p.waitErr
	default:
	}
	_ = syscall.Kill(p.PID, syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(grace):
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			return fmt.Errorf("weir (pid %d) did not exit after SIGKILL", p.PID)
		}
		return fmt.Errorf("weir (pid %d) did not stop within %s of SIGTERM; killed", p.PID, grace)
	}
}

// Kill sends SIGKILL to the PID and waits (at most 30 s) for the exit.
func (p *Proc) Kill() error {
	if p == nil || p.cmd == nil {
		return errNotStarted
	}
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("weir (pid %d) did not exit after SIGKILL", p.PID)
	}
}

// Exited is closed when the process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is the process's exit error (from Wait) once it has exited; nil
// while it runs and after a clean exit.
func (p *Proc) Err() error {
	select {
	case <-p.exited:
		return p.waitErr
	default:
		return nil
	}
}

// Tail returns the last n lines of the log.
func (p *Proc) Tail(n int) string { return TailFile(p.LogPath, n) }

// CPUTicks is the process's user+system CPU time in clock ticks
// (ClockTicks per second).
func (p *Proc) CPUTicks() (int64, error) { return ProcCPU(strconv.Itoa(p.PID)) }

// StatusKB reads a "Key: N kB" line of the process's /proc status (VmRSS,
// VmHWM).
func (p *Proc) StatusKB(key string) (int64, error) { return ProcStatusKB(strconv.Itoa(p.PID), key) }

// DumpGoroutines saves the server's goroutines to dest, for a stall:
// through pprof at pprofAddr when that is set and answers, otherwise by
// SIGQUIT, which also ends the server (the Go runtime writes the dump to
// the log, which is then copied to dest). It returns the file holding the
// dump: dest, or the log when dest cannot be written.
func (p *Proc) DumpGoroutines(dest, pprofAddr string) string {
	if pprofAddr != "" {
		c := &http.Client{Timeout: 10 * time.Second}
		res, err := c.Get("http://" + pprofAddr + "/debug/pprof/goroutine?debug=2")
		if err == nil {
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode == http.StatusOK && os.WriteFile(dest, b, 0o644) == nil {
				return dest
			}
		}
	}
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(p.PID, syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
		}
	}
	// The log is in the data dir, which may be temporary: copy it out.
	if b, err := os.ReadFile(p.LogPath); err == nil && os.WriteFile(dest, b, 0o644) == nil {
		return dest
	}
	return p.LogPath
}
