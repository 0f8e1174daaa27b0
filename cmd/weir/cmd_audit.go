// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weir-pki/weir/internal/audit"
	"github.com/weir-pki/weir/server"
)

// cmdAudit works on the audit trail's files, not on the running weir.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"verify": {"verify [-config FILE] [-from SEQ] [AUDIT-FILE...]", auditVerify},
	}
	return runGroup(ctx, "audit", verbs, []string{"verify"}, args, stdout, stderr)
}

// auditVerify checks the hash chain of audit files.
func auditVerify(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("audit verify", "audit verify [-config FILE] [-from SEQ] [AUDIT-FILE...]",
		"Checks the hash chain of audit files (JSON lines), oldest first, and that\n"+
			"their seq numbers follow each other from the trail's first event, and names\n"+
			"the first line where either breaks (exit 1). Without AUDIT-FILE: this\n"+
			"replica's files (audit.path of -config, its rotated files first).", stderr)
	configFile := fs.String("config", "", "the config `file` whose audit.path to check when no AUDIT-FILE is given")
	from := fs.Uint64("from", 0, "the `seq` of the first event given, when the trail's earlier files are archived elsewhere (default: the files begin at the trail's first event)")
	files, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if len(files) == 0 {
		cfg, err := server.LoadConfig(*configFile)
		if err != nil {
			writeConfigError(stderr, "weir audit verify: ", err)
			return 1
		}
		path := server.AuditPath(cfg)
		files = append(audit.RotatedFiles(path), path)
	}
	rep, err := audit.Verify(files, audit.VerifyOptions{From: *from})
	var b *audit.Break
	if errors.As(err, &b) {
		fmt.Fprintf(stderr, "weir audit verify: chain broken at %s:%d: %s\n", b.File, b.Line, b.Reason)
		fmt.Fprintf(stderr, "%d events before it verify\n", rep.Events)
		return 1
	}
	if err != nil {
		return fail(stderr, "audit verify", err)
	}
	fmt.Fprintf(stdout, "ok: %d events in %d files, chain intact, seq %d to %d\n", rep.Events, rep.Files, rep.First, rep.Last)
	if rep.Continues != "" {
		fmt.Fprintf(stdout, "the first event continues from an earlier event (hash %s) in a file not given\n", rep.Continues)
	}
	return 0
}
