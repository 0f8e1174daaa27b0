// Command weir is an ACME (RFC 8555) certificate authority for internal PKI
// with rate limiting built in.
//
//	weir serve [-config FILE]    run the CA (creates the data directory on first start)
//	weir version                 print the version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands maps a subcommand to its entry point.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"serve":   cmdServe,
	"version": cmdVersion,
}

func usage(w io.Writer) {
	fmt.Fprint(w, `weir: an ACME certificate authority for internal PKI

Usage:
  weir serve [-config FILE]   run the server; with no config, embedded defaults
  weir version                print the version

Run "weir <command> -h" for the flags of a command.
`)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "weir: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmd(ctx, args[1:], stdout, stderr)
}

func cmdVersion(_ context.Context, _ []string, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "weir %s\n", version)
	return 0
}
