package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/weir-pki/weir/internal/audit"
	"github.com/weir-pki/weir/server"
)

// cmdAudit works on the audit trail's files.
func cmdAudit(_ context.Context, args []string, stdout, stderr io.Writer) int {
	const group = "Usage: weir audit verify [-config FILE] [AUDIT-FILE...]\n\n" +
		"  weir audit verify   check the audit trail's hash chain\n"
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, group)
		return 0
	}
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(stderr, group)
		return 2
	}
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "the config `file` whose audit.path to check when no AUDIT-FILE is given")
	help := func(w io.Writer) {
		fmt.Fprint(w, "Usage: weir audit verify [-config FILE] [AUDIT-FILE...]\n\n"+
			"Checks the hash chain of audit files (JSON lines), oldest first, and names\n"+
			"the first line where it breaks (exit 1). Without AUDIT-FILE: this replica's\n"+
			"files (audit.path of -config, its rotated files first).\n\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.Usage = func() {}
	if err := fs.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return 0
	} else if err != nil {
		help(stderr)
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		cfg, err := server.LoadConfig(*configFile)
		if err != nil {
			writeConfigError(stderr, "weir audit: ", err)
			return 1
		}
		path := server.AuditPath(cfg)
		files = append(audit.RotatedFiles(path), path)
	}
	rep, err := audit.Verify(files)
	var b *audit.Break
	if errors.As(err, &b) {
		fmt.Fprintf(stderr, "weir audit: chain broken at %s:%d: %s\n", b.File, b.Line, b.Reason)
		fmt.Fprintf(stderr, "%d events before it verify\n", rep.Events)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "weir audit: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "ok: %d events in %d files, chain intact\n", rep.Events, rep.Files)
	if rep.Continues != "" {
		fmt.Fprintf(stdout, "the first event continues from an earlier event (hash %s) in a file not given\n", rep.Continues)
	}
	return 0
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}
