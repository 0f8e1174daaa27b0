// SPDX-License-Identifier: Apache-2.0

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
			"verified against <data-dir>/root.pem and the system roots. When the\n"+
			"configuration does not load, it asks the admin address weir serve recorded\n"+
			"in <data-dir>/admin.url.", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	rawURL := fs.String("url", "", "the readiness `URL` (default: from the configuration)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this `duration`")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	// A configuration edit that the running weir refused must not make its
	// container unhealthy (a restart would then fail on the bad file): fall
	// back to the admin address weir serve recorded, as the operator
	// commands do.
	t, err := server.FindAdmin(*configPath)
	if err != nil {
		return fail(stderr, "healthcheck", err)
	}
	if t.ConfigErr != nil && *rawURL == "" {
		if t.URL == "" {
			return fail(stderr, "healthcheck", fmt.Errorf("%w (and %s does not exist; pass -url)", t.ConfigErr, t.URLFile))
		}
		fmt.Fprintf(stderr, "weir healthcheck: warning: the configuration does not load (%s); asking the admin address weir serve recorded in %s\n", firstLine(t.ConfigErr), t.URLFile)
		*rawURL = t.URL + "/readyz"
	}
	report, ready, err := server.CheckReady(ctx, t.Config, *rawURL, *timeout)
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
