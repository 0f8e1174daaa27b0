// SPDX-License-Identifier: Apache-2.0

package system

import (
	"os"
	"testing"

	"github.com/weir-pki/weir/internal/weirproc"
)

// builder builds the weir binary once per run of the package, for the
// tests that run weir's operator commands against their server (env.cli);
// the first test that needs it pays.
var builder weirproc.Builder

func TestMain(m *testing.M) { os.Exit(builder.RunTests(m)) }
