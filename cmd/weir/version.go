// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"

	"github.com/weir-pki/weir/server"
)

// Release builds set these with -ldflags "-X main.version=v1.2.3
// -X main.commit=… -X main.date=…"; empty ones fall back to what the go
// command stamped into the binary (server.ReadBuildInfo).
var (
	version string
	commit  string
	date    string
)

// buildInfo is this binary's server.BuildInfo.
func buildInfo() server.BuildInfo {
	return server.ReadBuildInfo(version, commit, date, pkcs11Built)
}

// cmdVersion prints the build information; weir --version is the same.
func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "version [-json]",
		"Prints weir's version, VCS commit, commit or build date, Go version and\nwhether PKCS#11 signers are built in.", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	b := buildInfo()
	if *asJSON {
		printJSON(stdout, b)
		return 0
	}
	b.Print(stdout)
	return 0
}
