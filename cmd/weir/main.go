// SPDX-License-Identifier: Apache-2.0

// Command weir is an ACME (RFC 8555) certificate authority for internal PKI
// with rate limiting built in. Run "weir help" for its commands (usage.go).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands maps a subcommand to its entry point.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	// Setting up and running.
	"init":            cmdInit,
	"serve":           cmdServe,
	"check-config":    cmdCheckConfig,
	"migrate":         cmdMigrate,
	"migrate-storage": cmdMigrateStorage,
	"ca":              cmdCA,
	"audit":           cmdAudit,
	"log":             cmdLogWitness,
	// Operating a running weir.
	"healthcheck": cmdHealthcheck,
	"backup":      cmdBackup,
	"ratelimit":   cmdRatelimit,
	"accounts":    cmdAccounts,
	"certs":       cmdCerts,
	"crl":         cmdCRL,
	"eab":         cmdEAB,
	"tenant":      cmdTenant,
	"admin":       cmdAdmin,

	"version": cmdVersion,
}

// run is weir with its arguments; it returns the exit code: 0, 1 when the
// command failed, 2 for a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	own, args := helpArgs(args) // "weir help certs revoke" is "weir certs revoke -h"
	if own {
		usage(stdout)
		return 0
	}
	if args[0] == "-version" || args[0] == "--version" {
		return cmdVersion(ctx, args[1:], stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "weir: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd(ctx, args[1:], stdout, stderr)
}
