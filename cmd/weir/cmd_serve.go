package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/weir-pki/weir/server"
)

// cmdServe runs the server of -config until ctx ends.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML configuration `file` (default: embedded defaults)")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback `host:port` (profiling)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	tuneGC()
	opts := server.Options{ConfigFile: *configPath, Log: stderr}
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
	srv.PrintBanner(stdout, version)
	if err := srv.Serve(ctx, ln, adminLn); err != nil {
		fmt.Fprintf(stderr, "weir: %v\n", err)
		return 1
	}
	return 0
}
