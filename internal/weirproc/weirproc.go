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
	bin = filepath.Join(dir, "weir")
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", bin, Package)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building weir (run inside the weir module): %w\n%s", err, bytes.TrimSpace(out))
	}
	return bin, nil
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
