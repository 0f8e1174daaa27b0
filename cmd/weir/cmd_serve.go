// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/weir-pki/weir/server"
)

// cmdServe runs the server of -config until ctx ends.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", "serve [-config FILE] [-pprof HOST:PORT]",
		"Runs the ACME server (and the admin listener, when admin.enabled) until SIGINT or\n"+
			"SIGTERM. It creates the data directory, the CA, weir's HTTPS certificate and the\n"+
			"admin token on first start, migrates the store, prints where everything is,\n"+
			"and reloads the configuration file on SIGHUP and when it changes. With\n"+
			"log.format json everything it prints is JSON lines.", stderr)
	configPath := fs.String("config", "", "YAML configuration `file` (default: embedded defaults)")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback `host:port` (profiling)")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	server.TuneGC()
	cfg, err := server.LoadConfig(*configPath)
	// failed reports why serve stops, in the configured log format.
	failed := func(prefix string, err error) int {
		if cfg.Log.Format == "json" {
			server.LogFailure(stderr, fmt.Errorf("%s%w", prefix, err))
		} else {
			writeConfigError(stderr, "weir: "+prefix, err)
		}
		return 1
	}
	if err != nil {
		cfg.Log.Format = server.LogFormat(*configPath)
		return failed("", err)
	}
	opts := server.Options{ConfigFile: *configPath, Log: stderr, Build: buildInfo()}
	if *pprofAddr != "" {
		addr, err := server.StartPprof(*pprofAddr)
		if err != nil {
			return failed("-pprof: ", err)
		}
		opts.OtherListeners = append(opts.OtherListeners, addr)
	}
	if err := server.Run(ctx, cfg, opts, stdout); err != nil {
		return failed("", err)
	}
	return 0
}
