// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
)

// subcommand is one verb of a command group ("ratelimit status").
type subcommand struct {
	usage string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// groupNotes says what a group works on when it is not the running weir's
// admin API.
var groupNotes = map[string]string{
	"ca":    "The ceremonies work on files and tokens, not on a running weir; migration-status\nasks its admin API (with the admin flags; see docs/operations.md).",
	"audit": "These read the audit trail's files, not a running weir (see docs/operations.md, \"Audit trail\").",
	"log":   "verify and monitor read a served log (or verify a mirror of it), check-proof a\nproof file, witness runs a log's witness: none of them asks a running weir;\nprove asks its admin API (with the admin flags).",
}

// runGroup dispatches "weir GROUP VERB ...". "weir GROUP help VERB" is
// "weir GROUP VERB -h".
func runGroup(ctx context.Context, group string, verbs map[string]subcommand, order []string, args []string, stdout, stderr io.Writer) int {
	help := func(w io.Writer) {
		fmt.Fprintf(w, "Usage:\n")
		for _, v := range order {
			fmt.Fprintf(w, "  weir %s %s\n", group, verbs[v].usage)
		}
		note, ok := groupNotes[group]
		if !ok {
			note = "These ask a running weir's admin API (see docs/operations.md)."
		}
		fmt.Fprintf(w, "\n%s\nRun \"weir %s VERB -h\" for the flags of a verb.\n", note, group)
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "weir %s: which verb?\n\n", group)
		help(stderr)
		return 2
	}
	own, args := helpArgs(args)
	if own {
		help(stdout)
		return 0
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "weir %s: unknown verb %q\n\n", group, args[0])
		help(stderr)
		return 2
	}
	return v.run(ctx, args[1:], stdout, stderr)
}
