// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/weir-pki/weir/server"
)

// cmdMigrate brings the ACME store's schema up to date and prints its
// versions. weir serve migrates at start too (replicas take turns under
// PostgreSQL's advisory lock); weir migrate does it beforehand, e.g. as a
// deployment step before the new replicas start.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("migrate", "migrate [-config FILE]",
		"Applies the schema migrations of the ACME store (storage.driver: the SQLite\n"+
			"file, or the PostgreSQL schema) that it lacks and prints every version.\n"+
			"weir serve does the same at start; running weir migrate first is safe\n"+
			"while replicas run and while others migrate.", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	cfg, err := server.LoadConfig(*configPath)
	if err == nil {
		err = server.Migrate(ctx, cfg, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "weir migrate: %v\n", err)
		return 1
	}
	return 0
}
