package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/weir-pki/weir/server"
)

// cmdServe runs the server of -config until ctx ends.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", "serve [-config FILE] [-pprof HOST:PORT]",
		"Runs the ACME server (and the admin listener, when admin.enabled) until SIGINT or\n"+
			"SIGTERM. It creates the data directory, the CA, weir's HTTPS certificate and the\n"+
			"admin token on first start, migrates the store, prints where everything is,\n"+
			"and reloads the configuration file on SIGHUP and when it changes.", stderr)
	configPath := fs.String("config", "", "YAML configuration `file` (default: embedded defaults)")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback `host:port` (profiling)")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	tuneGC()
	build := buildInfo()
	opts := server.Options{ConfigFile: *configPath, Log: stderr, Build: build}
	if *pprofAddr != "" {
		addr, err := startPprof(*pprofAddr)
		if err != nil {
			fmt.Fprintf(stderr, "weir: -pprof: %v\n", err)
			return 1
		}
		opts.OtherListeners = append(opts.OtherListeners, addr)
	}
	cfg, err := server.LoadConfig(*configPath)
	if err != nil {
		writeConfigError(stderr, "weir: ", err)
		return 1
	}
	srv, err := server.New(ctx, cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "weir: %v\n", err)
		return 1
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "weir: %v\n", err)
		return 1
	}
	var adminLn net.Listener
	if cfg.Admin.On() {
		if adminLn, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "weir: admin.listen: %v\n", err)
			return 1
		}
	}
	if adminLn != nil {
		if err := srv.RecordAdminURL(adminLn.Addr()); err != nil {
			fmt.Fprintf(stderr, "weir: recording the admin address for the operator commands: %v\n", err)
		}
	}
	srv.PrintBanner(stdout, build.Version)
	if err := srv.Serve(ctx, ln, adminLn); err != nil {
		fmt.Fprintf(stderr, "weir: %v\n", err)
		return 1
	}
	return 0
}
