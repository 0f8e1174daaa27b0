// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"testing"

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
