// SPDX-License-Identifier: Apache-2.0

package main

//go:generate sh -c "go run . init -print-config -config config.example.yaml > ../../config.example.yaml"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weir-pki/weir/server"
)

// cmdCheckConfig reads a configuration file as serve does and prints
// every problem of it, one per line, each with its line and key.
func cmdCheckConfig(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check-config", "check-config FILE",
		"Reads FILE as weir serve would (unknown keys are errors) and validates it.\n"+
			"Prints \"FILE: ok\" (then warnings about the backends it names: a limiter\n"+
			"Redis without persistence, nonces on Redis; and tenant:NAME rate-limit overrides\n"+
			"of tenants the running weir does not have) and exits 0, or prints every problem, one per line as\n"+
			"FILE:LINE: key: problem, and exits 1.", stderr)
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(fs, stderr, "takes one configuration file")
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	cfg, err := server.ParseConfig(path, data)
	if err != nil {
		writeConfigError(stderr, "", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", path)
	warnings := append(server.BackendWarnings(ctx, cfg, 2*time.Second), tenantWarnings(ctx, path, cfg, 2*time.Second)...)
	for _, w := range warnings {
		fmt.Fprintf(stdout, "%s: warning: %s\n", path, w)
	}
	return 0
}

// writeConfigError prints an error of loading the configuration: a
// file's problems one per line, as FILE:LINE: key.path: message, else
// the error after prefix.
func writeConfigError(w io.Writer, prefix string, err error) {
	var ps *server.ConfigProblems
	if errors.As(err, &ps) {
		for _, l := range ps.Lines() {
			fmt.Fprintln(w, l)
		}
		return
	}
	fmt.Fprintf(w, "%s%v\n", prefix, err)
}
