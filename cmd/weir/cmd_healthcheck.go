package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/weir-pki/weir/server"
)

// cmdHealthcheck asks a running weir's /readyz and exits 0 when it is
// ready: the container image's HEALTHCHECK, which has no curl.
func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("healthcheck", "healthcheck [-config FILE] [-url URL] [-timeout D]",
		"GETs /readyz of a running weir and exits 0 when it answers 200, 1 otherwise.\n"+
			"The default URL is the admin listener's when it is enabled, else the ACME\n"+
			"listener's, on loopback when the listener binds every interface. HTTPS is\n"+
			"verified against <data-dir>/root.pem and the system roots.", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	rawURL := fs.String("url", "", "the readiness `URL` (default: from the configuration)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this `duration`")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	cfg, err := server.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "weir healthcheck: %v\n", err)
		return 1
	}
	report, ready, err := server.CheckReady(ctx, cfg, *rawURL, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "weir healthcheck: %v\n", err)
		return 1
	}
	if !ready {
		fmt.Fprint(stderr, report)
		return 1
	}
	fmt.Fprint(stdout, report)
	return 0
}
