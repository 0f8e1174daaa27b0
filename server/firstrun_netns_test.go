// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inFirstRunNetns marks the test binary re-run inside its own network
// namespace by TestTwoCommandFirstRun; firstRunBinary passes it the weir
// binary built outside.
const (
	inFirstRunNetns = "WEIR_TEST_IN_FIRSTRUN_NETNS"
	firstRunBinary  = "WEIR_TEST_FIRSTRUN_BINARY"
)

// TestTwoCommandFirstRun: weir serve with no flags on an empty directory
// (the README's first run) creates ./weir-data with the CA (both keys in
// it, as before), serves on its default ports (the CRL over plain HTTP
// too, at the URL the banner names) and prints the banner; a
// second start reuses the CA, and both warn that the root key is online.
// The default ports are fixed, so it runs in a network namespace of its
// own (unshare -n), where no other process holds them.
func TestTwoCommandFirstRun(t *testing.T) {
	if os.Getenv(inFirstRunNetns) == "1" {
		firstRunInNetns(t)
		return
	}
	requireNetns(t)
	bin := builder.Binary(t)
	cmd := exec.CommandContext(t.Context(), "unshare", "-n", "--", "sh", "-c", "set -e\nip link set lo up\nexec \"$@\"", "sh",
		os.Args[0], "-test.run=^TestTwoCommandFirstRun$", "-test.count=1", "-test.v", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), inFirstRunNetns+"=1", firstRunBinary+"="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test in its network namespace: %v\n%s", err, out)
	}
	t.Logf("in its network namespace:\n%s", out)
}

// firstRunInNetns is the body of TestTwoCommandFirstRun, inside the
// namespace.
func firstRunInNetns(t *testing.T) {
	bin, dir := os.Getenv(firstRunBinary), t.TempDir()
	// serve runs weir serve until it is ready, stops it, and returns what it
	// printed (read after Wait, when the copying of its output is done).
	serve := func() (output string) {
		var out bytes.Buffer
		cmd := exec.Command(bin, "serve")
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := false
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Errorf("weir serve did not stop within 20 s of SIGTERM")
			}
			output = out.String()
			if !ready {
				t.Fatalf("weir serve was not ready within 30 s:\n%s", output)
			}
		}()
		for i := 0; i <= 120; i++ {
			hc := exec.Command(bin, "healthcheck")
			hc.Dir = dir
			if hc.Run() == nil {
				ready = true
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		// The CRL the certificates name, over plain HTTP on its default
		// port, as a relying party fetches it.
		if ready {
			res, err := http.Get("http://localhost:14080/ca/crl.der")
			if err != nil {
				t.Fatal(err)
			}
			der, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if _, err := x509.ParseRevocationList(der); res.StatusCode != http.StatusOK || err != nil {
				t.Errorf("GET http://localhost:14080/ca/crl.der: %d, %v", res.StatusCode, err)
			}
		}
		return ""
	}
	first := serve()
	for _, w := range []string{"is serving ACME", "https://localhost:14000/directory", "http://localhost:14080/ca/crl.der", "SHA-256:", "certbot certonly", "root CA's key is in the data directory"} {
		if !strings.Contains(first, w) {
			t.Errorf("the first start's output lacks %q:\n%s", w, first)
		}
	}
	data := filepath.Join(dir, "weir-data")
	for _, f := range []string{fileRootPEM, fileCARoot, fileCARootKey, fileCAIntermediate, fileCAIntKey, fileTLSCert, "admin-token", "weir.db"} {
		if !exists(dataPath(data, f)) {
			t.Errorf("the first start made no %s", f)
		}
	}
	root, err := os.ReadFile(dataPath(data, fileRootPEM))
	if err != nil {
		t.Fatal(err)
	}
	second := serve()
	if again, err := os.ReadFile(dataPath(data, fileRootPEM)); err != nil || !bytes.Equal(root, again) {
		t.Errorf("the second start changed the root (%v)", err)
	}
	if strings.Contains(second, "generated a new CA") || !strings.Contains(second, "is serving ACME") {
		t.Errorf("the second start did not reuse the CA:\n%s", second)
	}
}
