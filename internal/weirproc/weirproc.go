// SPDX-License-Identifier: Apache-2.0

// Package weirproc runs weir binaries as child processes, for tests and
// for the load tool (cmd/weir-load): it builds weir, starts it with a
// configuration of the caller's and waits until it serves its directory,
// stops or kills it by PID, reads its CPU and memory from /proc, gives a
// second replica the same CA (SeedCA), and dials several replicas in turn
// as a load balancer would (RoundRobin). It also starts a private
// redis-server (StartRedis) for replicas that share a limiter; a
// PostgreSQL schema of their own is storage/postgres/pgschema's.
//
// Every process it starts gets SIGTERM from the kernel when the process
// that started it dies (Pdeathsig), and is stopped by its PID only. Every
// wait is bounded in time.
package weirproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Package is the import path of the weir command that Build compiles.
const Package = "github.com/weir-pki/weir/cmd/weir"

// goTool is the go command: $GOROOT/bin/go when GOROOT is set (go test
// and go run set it), else go from PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// Build compiles weir (Package) into dir and returns the binary's path.
// It must run inside the weir module (any directory of it).
func Build(ctx context.Context, dir string) (bin string, err error) {
	return BuildFrom(ctx, "", dir)
}

// BuildFrom is Build from the weir source tree src ("": the current
// directory's module), with extra go build flags (e.g. -trimpath).
func BuildFrom(ctx context.Context, src, dir string, flags ...string) (bin string, err error) {
	bin = filepath.Join(dir, "weir")
	args := append(append([]string{"build"}, flags...), "-o", bin, Package)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = src
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building weir (run inside the weir module): %w\n%s", err, bytes.TrimSpace(out))
	}
	return bin, nil
}

// A Builder builds weir once, at the first Binary, into a temporary
// directory of its own that Close removes: the tests of a package share
// one build (RunTests).
type Builder struct {
	once     sync.Once
	dir, bin string
	err      error
}

// buildTimeout bounds a Builder's build.
const buildTimeout = 5 * time.Minute

// TB is what Binary needs of a test: testing.TB's Helper and Fatalf.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Binary returns the path of the weir binary, building it (Build) at the
// first call, and fails t if it cannot be built; every call gets the
// first call's outcome.
func (b *Builder) Binary(t TB) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "weir-bin-"); b.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		b.bin, b.err = Build(ctx, b.dir)
	})
	if b.err != nil {
		t.Fatalf("building weir: %v", b.err)
	}
	return b.bin
}

// RunTests runs a test binary's tests (m is its *testing.M) and then
// removes the binary b built for them: the whole TestMain of a package
// whose tests share b is os.Exit(b.RunTests(m)).
func (b *Builder) RunTests(m interface{ Run() int }) int {
	defer b.Close()
	return m.Run()
}

// Close removes the binary and its directory, if Binary made them.
func (b *Builder) Close() error {
	if b.dir == "" {
		return nil
	}
	return os.RemoveAll(b.dir)
}

// GitRev describes the checkout of the working directory ("" outside
// git): the short commit, with "+dirty" when tracked files have changes.
func GitRev(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += "+dirty"
	}
	return rev
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddrs returns n distinct free loopback addresses "127.0.0.1:PORT".
// The listeners that found them stay open until all n are found, so that
// the kernel cannot hand the same port out twice, as calling FreeAddr n
// times can.
func FreeAddrs(n int) ([]string, error) {
	addrs := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs, nil
}

// FreeAddr is FreePort as "127.0.0.1:PORT".
func FreeAddr() (string, error) {
	p, err := FreePort()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", p), nil
}

// errNotStarted is returned by a Proc method that needs a process.
var errNotStarted = errors.New("weirproc: no process")
