// SPDX-License-Identifier: Apache-2.0

package weirproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"time"
)

// RunTB is what Run needs of a test: TB and the test's context.
type RunTB interface {
	TB
	Context() context.Context
}

// Run runs a weir command line with b's binary, as run does in weir's
// main, with its output to stdout and stderr, and returns its exit code;
// the command gets two minutes.
func (b *Builder) Run(t RunTB, args []string, stdout, stderr io.Writer) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Binary(t), args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("weir %v: %v", args, err)
	}
	return 0
}

// CLI runs weir command lines against a running server through its
// configuration file, as an operator on its host does.
type CLI struct {
	Builder *Builder
	// Config is the server's configuration file, given as -config.
	Config string
}

// Run runs a weir command line and returns stdout and stderr; an exit
// code other than wantCode fails t.
func (c CLI) Run(t RunTB, wantCode int, args ...string) string {
	t.Helper()
	code, stdout, stderr := c.Exit(t, args...)
	if code != wantCode {
		t.Fatalf("weir %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout, stderr)
	}
	return stdout + stderr
}

// Exit runs a weir command line, as Run does, and returns its exit code,
// stdout and stderr, whatever the code.
func (c CLI) Exit(t RunTB, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := c.Builder.Run(t, append(append([]string{}, args...), "-config", c.Config), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// JSON runs a weir command with --json and decodes its output into out.
func (c CLI) JSON(t RunTB, out any, args ...string) {
	t.Helper()
	text := c.Run(t, 0, append(args, "--json")...)
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("weir %s --json: %v\n%s", strings.Join(args, " "), err, text)
	}
}
