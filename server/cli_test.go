// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// The system tests drive weir's command line as an operator does: the
// operator commands (weir ratelimit, accounts, certs, crl, eab), weir
// backup, healthcheck, check-config and migrate-storage, and a second
// weir serve that a test kills, run as the weir binary of cmd/weir, built
// once per run of the package, against the test's server.

// builder builds the weir binary once per run of the package (the first
// test that needs it pays).
var builder weirproc.Builder

func TestMain(m *testing.M) { os.Exit(builder.RunTests(m)) }

// runWeir runs a weir command line, as run does in weir's main, with its
// output to stdout and stderr, and returns its exit code.
func runWeir(t *testing.T, args []string, stdout, stderr io.Writer) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, builder.Binary(t), args...)
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
