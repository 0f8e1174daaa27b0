package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildWeir compiles ./cmd/weir of the enclosing module into dir.
func buildWeir(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "weir")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/weir-pki/weir/cmd/weir")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building weir (run from inside the weir module, or pass -weir): %w", err)
	}
	return bin, nil
}

// gitRev describes the checkout weir was built from ("" outside git):
// the short commit, with "+dirty" when the work tree has changes.
func gitRev(ctx context.Context) string {
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

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// serverProc is a weir server running as a child process.
type serverProc struct {
	cmd        *exec.Cmd
	pid        int
	base       string // https://127.0.0.1:port
	pprofAddr  string // "" unless started with -pprof
	rateLimits string // the -ratelimits mode in effect
	logPath    string
	roots      *x509.CertPool
	exited     chan struct{}
	waitErr    error
}

// serverOptions are what the load tool puts into the weir config.
type serverOptions struct {
	bin, dataDir, dnsAddr string
	httpPort              int
	pprof                 bool
	validationWorkers     int
	rateLimits            string // off, high or server
}

// rateLimitBlocks are the rate-limiting: config blocks of -ratelimits.
// "off" disables every limit, "high" enables every limit with values no
// load run reaches (to measure the limiter's cost), "server" keeps weir's
// defaults (which refuse a load test within seconds).
var rateLimitBlocks = map[string]string{
	"off": `rate-limiting:
  global: { enabled: false }
  account-creation: { enabled: false }
  order-creation: { enabled: false }
  duplicate-certificate: { enabled: false }
  failed-validation: { enabled: false }
  pending-authorizations: { enabled: false }
  registered-domain: { enabled: false }
`,
	"high": `rate-limiting:
  global: { enabled: true, requests-per-minute: 6000000, burst: 1000000 }
  account-creation: { enabled: true, per-ip-per-hour: 1000000000, burst: 100000000 }
  order-creation: { enabled: true, orders-per-account-per-hour: 1000000000, order-burst: 100000000, san-budget-per-account-per-hour: 1000000000 }
  duplicate-certificate: { enabled: true, max-per-window: 1000000000, window: 168h }
  failed-validation: { enabled: true, max-per-window: 1000000000, window: 1h }
  pending-authorizations: { enabled: true, max: 1000000000 }
  registered-domain: { enabled: true, max-per-window: 1000000000, window: 168h }
`,
	"server": "",
}

// startServer starts weir; a weir that predates the rate-limiting: block
// (its strict config parser refuses the key) is started again without it
// when -ratelimits is off, since it has no limits to switch off.
func startServer(ctx context.Context, o serverOptions) (*serverProc, error) {
	p, err := startServerOnce(ctx, o)
	if err != nil && o.rateLimits == "off" && strings.Contains(err.Error(), "field rate-limiting not found") {
		o.rateLimits = "server"
		if p, err = startServerOnce(ctx, o); err == nil {
			p.rateLimits = "none (this weir has no rate limiting)"
		}
	}
	return p, err
}

// startServerOnce writes a config into dataDir, starts weir serve and
// waits until its directory answers over HTTPS with the root it generated.
func startServerOnce(ctx context.Context, o serverOptions) (*serverProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "data-dir: %q\n", o.dataDir)
	fmt.Fprintf(&cfg, "server:\n  listen: %q\n", listen)
	if o.validationWorkers > 0 {
		fmt.Fprintf(&cfg, "acme:\n  validation-workers: %d\n", o.validationWorkers)
	}
	fmt.Fprintf(&cfg, "challenges:\n  http-01:\n    port: %d\n  dns-resolver: %q\n", o.httpPort, o.dnsAddr)
	fmt.Fprintf(&cfg, "log:\n  level: warn\n")
	cfg.WriteString(rateLimitBlocks[o.rateLimits])
	cfgPath := filepath.Join(o.dataDir, "weir-load.yaml")
	if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		return nil, err
	}
	args := []string{"serve", "-config", cfgPath}
	var pprofAddr string
	if o.pprof {
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", pp)
		args = append(args, "-pprof", pprofAddr)
	}
	logPath := filepath.Join(o.dataDir, "weir-server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the load tool dies, the kernel stops the server too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", o.bin, err)
	}
	p := &serverProc{rateLimits: o.rateLimits, cmd: cmd, pid: cmd.Process.Pid, base: "https://" + listen, pprofAddr: pprofAddr, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	if err := p.waitReady(ctx, filepath.Join(o.dataDir, "root.pem")); err != nil {
		p.stop(5 * time.Second)
		return nil, fmt.Errorf("%w (server log: %s)\n%s", err, logPath, tail(logPath, 20))
	}
	return p, nil
}

// waitReady waits (at most 60 s) for root.pem and then for the directory.
func (p *serverProc) waitReady(ctx context.Context, rootPath string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("weir exited during start-up: %v", p.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("weir did not become ready within 60s")
		}
		if p.roots == nil {
			if pem, err := os.ReadFile(rootPath); err == nil {
				pool := x509.NewCertPool()
				if pool.AppendCertsFromPEM(pem) {
					p.roots = pool
				}
			}
		}
		if p.roots != nil {
			c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.roots}}}
			res, err := c.Get(p.base + "/directory")
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				c.CloseIdleConnections()
				if res.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM to the server's PID and waits; after grace it kills.
func (p *serverProc) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return p.waitErr
	default:
	}
	_ = syscall.Kill(p.pid, syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(grace):
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("weir (pid %d) did not stop within %s of SIGTERM; killed", p.pid, grace)
	}
}

// dumpGoroutines saves the server's goroutines after a stall: through
// pprof when it is on, otherwise by SIGQUIT (which also ends the server;
// the Go runtime writes the dump to the server log).
func (p *serverProc) dumpGoroutines(dest string) string {
	if p.pprofAddr != "" {
		c := &http.Client{Timeout: 10 * time.Second}
		res, err := c.Get("http://" + p.pprofAddr + "/debug/pprof/goroutine?debug=2")
		if err == nil {
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if os.WriteFile(dest, b, 0o644) == nil {
				return dest
			}
		}
	}
	_ = syscall.Kill(p.pid, syscall.SIGQUIT)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
	// The log is in the data dir, which may be temporary: copy it out.
	if b, err := os.ReadFile(p.logPath); err == nil && os.WriteFile(dest, b, 0o644) == nil {
		return dest
	}
	return p.logPath
}

// procCPU returns a process's user+system CPU time in clock ticks
// (/proc/PID/stat fields 14 and 15).
func procCPU(pid string) (int64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces: parse after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14 = f[11], stime f[12].
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat times")
	}
	return u + s, nil
}

// procStatusKB reads a "Key:   N kB" line of /proc/PID/status.
func procStatusKB(pid, key string) (int64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			fs := strings.Fields(rest)
			if len(fs) == 0 {
				break
			}
			return strconv.ParseInt(fs[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s not in /proc/%s/status", key, pid)
}

// machineCPU returns the busy and total jiffies of all CPUs (/proc/stat).
func machineCPU() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fs := strings.Fields(line)
	if len(fs) < 5 || fs[0] != "cpu" {
		return 0, 0
	}
	for i, v := range fs[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i >= 8 { // guest times are already counted in user/nice
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// clockTicks is getconf CLK_TCK (100 when getconf is missing).
func clockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
