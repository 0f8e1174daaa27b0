// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"
	_ "modernc.org/sqlite"

	"github.com/weir-pki/weir/internal/weirproc"
)

// The small disk of TestFullDisk.
const fullDiskSize = 32 << 20

// TestFullDisk runs weir with its data directory (the SQLite store, and
// the SQLite limiter in the first case) on a tmpfs of 32 MiB of its own,
// mounted in a private mount namespace (unshare -m), and fills it:
// /readyz answers 503 within 5 s and every new-order refused is refused
// with 503 serverInternal and Retry-After, never a bare 500. With the
// SQLite limiter none is admitted: on-backend-error is allow, which a
// limiter that cannot write must not fall back to. With the in-process
// limiter the store's own failed writes give the 503. Once the filler is
// deleted, /readyz answers 200 again by itself, a certificate is issued,
// and the databases pass PRAGMA integrity_check.
func TestFullDisk(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		missing(t, "root and unshare(1) (util-linux), to mount a tmpfs in a private mount namespace")
	}
	probe := t.TempDir()
	if out, err := exec.Command(unshare, "-m", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=1m", "weir-probe", probe).CombinedOutput(); err != nil {
		// No fault-injecting fallback exists: the test fails under CI
		// rather than pass without the fault.
		missing(t, "a tmpfs mount in a private mount namespace (CAP_SYS_ADMIN): "+strings.TrimSpace(string(out)))
	}
	for _, backend := range []string{"sqlite", "memory"} {
		t.Run("limiter="+backend, func(t *testing.T) { fullDisk(t, unshare, backend) })
	}
}

// fullDisk is TestFullDisk with the limiter backend given.
func fullDisk(t *testing.T, unshare, backend string) {
	bin := builder.Binary(t)
	s := newSolo(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	// The CA is made beforehand, on the host's disk, and copied onto the
	// tmpfs by the wrapper that mounts it.
	h := t.TempDir()
	initDir := filepath.Join(h, "init")
	if out, err := exec.CommandContext(ctx, bin, "init", "-config", filepath.Join(initDir, "weir.yaml"), "-data-dir", filepath.Join(initDir, "d")).CombinedOutput(); err != nil {
		t.Fatalf("weir init: %v\n%s", err, out)
	}
	seed, disk := filepath.Join(h, "seed"), filepath.Join(h, "disk")
	for _, d := range []string{seed, disk} {
		if err := weirproc.SeedCA(filepath.Join(initDir, "d"), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := weirproc.SeedCA(filepath.Join(initDir, "d"), h); err != nil { // root.pem, for weirproc's wait
		t.Fatal(err)
	}
	wrapper := filepath.Join(h, "weir-on-tmpfs")
	script := `#!/bin/sh
exec ` + unshare + ` -m --propagation private sh -c 'mount -t tmpfs -o size=` + strconv.Itoa(fullDiskSize) + `,mode=0700 weir-full-disk "$1" && cp -a "$2"/. "$1"/ && shift 2 && exec "$@"' sh ` + disk + " " + seed + " " + bin + ` "$@"
`
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	listen, err := weirproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	p, err := weirproc.Start(ctx, weirproc.Options{Bin: wrapper, DataDir: h, Listen: listen,
		Config: s.config(disk, listen, "", `rate-limiting:
  backend: `+backend+`
  on-backend-error: allow
  global: { enabled: false }
`)})
	if err != nil {
		t.Fatal(err)
	}
	s.started(p)
	// The tmpfs as this process sees it: through weir's own root.
	onDisk := func(name string) string { return filepath.Join("/proc", strconv.Itoa(p.PID), "root", disk, name) }
	var st syscall.Statfs_t
	if err := syscall.Statfs(onDisk(""), &st); err != nil || st.Blocks*uint64(st.Bsize) > 2*fullDiskSize {
		t.Fatalf("weir's data directory is not on the small tmpfs (statfs: %v, %d bytes)", err, st.Blocks*uint64(st.Bsize))
	}

	hc := s.httpClient("")
	if got := s.readyz(hc); got != http.StatusOK {
		t.Fatalf("/readyz = %d before the disk fills, want 200", got)
	}
	c, err := s.acmeClient(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.issue(ctx, c, "before.example.com"); err != nil {
		t.Fatalf("issuing before the disk fills: %v", err)
	}

	filled := fill(t, onDisk("filler"))
	t.Logf("filled the tmpfs with %d MiB", filled>>20)
	lat, err := s.waitReadyz(hc, http.StatusServiceUnavailable, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/readyz answered 503 %s after the disk filled", lat.Round(time.Millisecond))

	const attempts = 20
	admitted, refused := 0, 0
	for i := range attempts {
		_, err := c.AuthorizeOrder(ctx, xacme.DomainIDs("full"+strconv.Itoa(i)+".example.com"))
		var ae *xacme.Error
		switch {
		case err == nil:
			admitted++
		case errors.As(err, &ae) && ae.StatusCode == http.StatusServiceUnavailable &&
			ae.ProblemType == probServerInternal && ae.Header.Get("Retry-After") != "":
			refused++
		default:
			t.Errorf("new-order %d on a full disk: %v, want 503 serverInternal with Retry-After", i, err)
		}
	}
	t.Logf("full disk: %d new-orders, %d admitted, %d refused with 503 serverInternal and Retry-After", attempts, admitted, refused)
	logText, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	byLimiter := strings.Count(string(logText), "rate limiter cannot write; request refused")
	if backend == "sqlite" {
		t.Logf("of those, %d refused by the SQLite limiter, which could not commit", byLimiter)
	}
	switch {
	case backend == "sqlite" && admitted != 0:
		t.Errorf("%d new-orders admitted by a SQLite limiter on a full disk, want 0", admitted)
	case backend == "sqlite" && byLimiter == 0:
		t.Error("no new-order was refused by the SQLite limiter (log: \"rate limiter cannot write\"); the test did not reach it")
	case refused == 0:
		t.Error("no new-order was refused: the store's writes did not fail; the test did not reach the fault")
	}

	if err := os.Remove(onDisk("filler")); err != nil {
		t.Fatal(err)
	}
	lat, err = s.waitReadyz(hc, http.StatusOK, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/readyz answered 200 %s after space returned", lat.Round(time.Millisecond))
	start := time.Now()
	if _, err := s.issue(ctx, c, "after.example.com"); err != nil {
		t.Fatalf("issuing after space returned: %v", err)
	}
	t.Logf("issued a certificate in %s after recovery", time.Since(start).Round(time.Millisecond))
	dbs := []string{"weir.db"}
	if backend == "sqlite" {
		dbs = append(dbs, "ratelimit.db")
	}
	for _, name := range dbs {
		if got := integrity(t, onDisk(name)); got != "ok" {
			t.Errorf("PRAGMA integrity_check of %s = %q, want ok", name, got)
		} else {
			t.Logf("PRAGMA integrity_check of %s: ok", name)
		}
	}
}

// fill writes path until the file system is full (ENOSPC), in 1 MiB
// writes, at most twice the disk's size, and returns the bytes written.
func fill(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for range 2 * fullDiskSize >> 20 {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("wrote %d bytes to %s without filling it", n, path)
	return n
}

// integrity runs PRAGMA integrity_check on the SQLite file at path, while
// weir has it open.
func integrity(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatalf("integrity_check of %s: %v", path, err)
	}
	return res
}
