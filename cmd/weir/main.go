// Command weir is an ACME (RFC 8555) certificate authority for internal PKI
// with rate limiting built in.
//
//	weir init [-config FILE] [-data-dir DIR]   write a commented config file and create the CA
//	weir serve [-config FILE]                  run the CA (creates the data directory on first start)
//	weir check-config FILE                     check a config file, naming the key of each problem
//	weir migrate [-config FILE]                apply the ACME store's schema migrations, print its versions
//	weir migrate-storage --from sqlite --to postgres --to-dsn DSN
//	                                           copy a stopped weir's ACME state from SQLite to PostgreSQL
//	weir ca take-root-offline|new-intermediate-key|sign-intermediate|import
//	                                           the CA's ceremonies, with the root kept offline
//	weir audit verify [-config FILE] [FILE...] check the audit trail's hash chain
//	weir healthcheck [-config FILE] [-url URL] exit 0 when a running weir is ready
//	weir backup [-config FILE] -out DIR        copy the data directory while weir runs
//	weir ratelimit status|explain|reset        the limiter's buckets, through the admin API
//	weir accounts list|show|deactivate         accounts, through the admin API
//	weir certs list|show|revoke                certificates, through the admin API
//	weir crl [-regenerate] [-out FILE]         the current CRL, through the admin API
//	weir eab create|list|revoke                External Account Binding keys, through the admin API
//	weir version                               print the version
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
	// Setting up and running.
	"init":            cmdInit,
	"serve":           cmdServe,
	"check-config":    cmdCheckConfig,
	"migrate":         cmdMigrate,
	"migrate-storage": cmdMigrateStorage,
	"ca":              cmdCA,
	"audit":           cmdAudit,
	// Operating a running weir.
	"healthcheck": cmdHealthcheck,
	"backup":      cmdBackup,
	"ratelimit":   cmdRatelimit,
	"accounts":    cmdAccounts,
	"certs":       cmdCerts,
	"crl":         cmdCRL,
	"eab":         cmdEAB,

	"version": cmdVersion,
}

func usage(w io.Writer) {
	fmt.Fprint(w, `weir: an ACME certificate authority for internal PKI

Usage:
  weir init [-config FILE] [-data-dir DIR] [-force] [-print-config]
         [-root-key-out FILE]
                              write a commented config file (default weir.yaml)
                              and create the data directory: CA, HTTPS
                              certificate, admin token (the root's key at
                              FILE, outside it, with -root-key-out)
  weir serve [-config FILE]   run the server; with no config, embedded defaults
  weir check-config FILE      check a config file; every problem names its key
  weir migrate [-config FILE] apply the ACME store's schema migrations (SQLite
                              or PostgreSQL) and print its versions; serve
                              does it at start too
  weir migrate-storage [-config FILE] --from sqlite --to postgres
         --to-dsn DSN | --to-dsn-file FILE [-force]
                              copy a stopped weir's ACME state (accounts,
                              orders, certificates, revocations) from its
                              SQLite file to PostgreSQL, keeping every ID
  weir ca take-root-offline|new-intermediate-key|sign-intermediate|import
                              the CA's ceremonies: move the root key offline,
                              make and sign a new intermediate with it, import
                              it (run "weir ca" for each one's flags)
  weir audit verify [-config FILE] [AUDIT-FILE...]
                              check the audit trail's hash chain; names the
                              first line where it breaks

Operating:
  weir healthcheck [-config FILE] [-url URL]
                              exit 0 when the running weir's /readyz is 200
  weir backup [-config FILE] -out DIR
                              copy the data directory (CA, token, database
                              snapshots) while weir runs
  weir ratelimit status KEY | --account ID | --ip IP
  weir ratelimit explain --account ID --names a,b
  weir ratelimit reset KEY    see and reset the limiter's buckets
  weir accounts list|show ID|deactivate ID
  weir certs list|show SERIAL|revoke SERIAL [--reason R]
  weir crl [-regenerate] [-out FILE]
  weir eab create --label L|list [--label L]|revoke KEY-ID
                              External Account Binding keys: create prints
                              the key ID, the HMAC key (once) and the
                              certbot and lego flags
                              these ask the running weir's admin API, found
                              from -config (admin.listen, admin.token-file);
                              add --json for scripts

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
