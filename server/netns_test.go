// SPDX-License-Identifier: Apache-2.0

package server

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// requireNetns skips t unless it can run a process in a network
// namespace of its own (unshare -n: Linux, root, util-linux and
// iproute2); under CI=true it fails instead.
func requireNetns(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case runtime.GOOS != "linux":
		why = "network namespaces are Linux's"
	case os.Geteuid() != 0:
		why = "unshare -n needs root"
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil && why == "" {
			why = tool + " is not installed (util-linux, iproute2)"
		}
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot run in a network namespace: %s", why)
		}
		t.Skipf("skipped: %s; run as root on Linux with unshare and ip (CI=true makes this a failure)", why)
	}
}
