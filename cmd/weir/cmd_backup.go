// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/weir-pki/weir/server"
)

// cmdBackup copies a data directory, live: the CA files, weir's HTTPS
// certificate, the admin token, consistent snapshots of the SQLite
// databases and the audit trail. The copy is a data directory weir serve
// can start on.
func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("backup", "backup [-config FILE] -out DIR",
		"Copies the data directory to DIR (new, or empty) while weir runs: CA keys and\n"+
			"certificates, weir's HTTPS certificate, the admin token, a consistent\n"+
			"snapshot of each SQLite database (VACUUM INTO), and the audit trail's\n"+
			"files (their complete lines, rotated files too; it says how many events,\n"+
			"and that each chain verifies). To restore, stop weir and\n"+
			"start it with data-dir set to DIR (or DIR moved into place). With\n"+
			"storage.driver postgres it refuses: back the database up with pg_dump.", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	out := fs.String("out", "", "the backup `directory` to create")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	if *out == "" {
		return usageError(fs, stderr, "-out is required")
	}
	cfg, err := server.LoadConfig(*configPath)
	if err == nil {
		err = server.Backup(ctx, cfg, *out, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "weir backup: %v\n", err)
		return 1
	}
	return 0
}
