// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// CommandOptions start a server that is not weir (a peer CA the load
// tool measures weir against): any binary with its own arguments, made
// ready when an HTTPS URL of its listener answers 200.
type CommandOptions struct {
	// Bin is the binary; Args its arguments.
	Bin  string
	Args []string
	// Env is extra environment (KEY=VALUE) on top of this process's.
	Env []string
	// Dir is its working directory and the Proc's DataDir, created 0700
	// if missing.
	Dir string
	// LogPath receives its stdout and stderr, appended; default
	// Dir/server.log.
	LogPath string
	// Listen is the host:port of its HTTPS listener (Proc.Listen).
	Listen string
	// Roots are the roots its listener's certificate chains to
	// (Proc.Roots).
	Roots *x509.CertPool
	// ReadyPath is the path under https://Listen that answers 200 once
	// the server is ready ("/health", "/dir").
	ReadyPath string
	// ReadyTimeout bounds the wait for readiness; default 60s.
	ReadyTimeout time.Duration
}

// StartCommand starts o.Bin as Start starts weir (the kernel sends it
// SIGTERM when the thread that started it dies; Stop and Kill act on its
// PID, and its death by SIGTERM is a clean exit) and waits until GET https://Listen+ReadyPath answers 200. When it
// does not become ready, StartCommand stops it and returns an error that
// ends with the tail of its log. ctx bounds the wait for readiness only.
func StartCommand(ctx context.Context, o CommandOptions) (*Proc, error) {
	if o.Bin == "" || o.Dir == "" || o.Listen == "" || o.Roots == nil {
		return nil, errors.New("weirproc: CommandOptions need Bin, Dir, Listen and Roots")
	}
	if o.LogPath == "" {
		o.LogPath = filepath.Join(o.Dir, "server.log")
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Bin, o.Args...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), o.Env...)
	p := &Proc{Listen: o.Listen, Base: "https://" + o.Listen, DataDir: o.Dir, LogPath: o.LogPath, Roots: o.Roots}
	if err := p.spawn(cmd, o.Bin, termIsClean); err != nil {
		return nil, err
	}
	if err := p.waitURL(ctx, p.Base+o.ReadyPath, o.ReadyTimeout); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s: %w (pid %d, log %s):\n%s", filepath.Base(o.Bin), err, p.PID, p.LogPath, p.Tail(20))
	}
	return p, nil
}

// termIsClean is a wait's error, nil for death by SIGTERM: a server with
// no handler for it (pebble) stops so.
func termIsClean(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}

// waitURL polls url (through p's listener, trusting p.Roots) until it
// answers 200, the process exits, ctx ends or timeout passes.
func (p *Proc) waitURL(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := p.HTTPClient()
	c.Timeout = 2 * time.Second
	defer c.CloseIdleConnections()
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("exited during start-up: %v", p.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within %s", url, timeout)
		}
		if res, err := c.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
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
