// SPDX-License-Identifier: Apache-2.0

// The weir of the fleet: one process on SQLite with short certificate
// lifetimes and the loopback whitelisted, its configuration (rewritten by
// the drill's operator steps), its restart on the same ports, and the
// ceremonies of a new issuer through weir's own command line.

package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// fleetServer is weir as the fleet runs it.
type fleetServer struct {
	bin, dataDir  string
	listen, admin string // fixed across restarts
	dnsAddr       string
	httpPort      int
	proc          *weirproc.Proc

	lifetime, backdate time.Duration
	limits             fleetLimits
	maxRenewals        int  // acme.renewal-info.max-renewals-per-hour; 0: weir's default
	issuerB            bool // ca.issuers lists b, which is active
	renewEarlyA        bool // ca.intermediate.renew-early
}

// fleetLimits are the account limits the fleet runs under: weir's
// defaults, or tight ones that its steady renewals come close to.
type fleetLimits struct {
	Mode                string `json:"mode"` // default or tight
	OrdersPerHour       int64  `json:"orders_per_account_per_hour"`
	OrderBurst          int64  `json:"order_burst"`
	SANBudgetPerHour    int64  `json:"san_budget_per_account_per_hour"`
	MaxRenewalsPerHour  int    `json:"max_renewals_per_hour"` // the planner's ceiling for the whole CA
	ExpectedPerAcctHour string `json:"expected_renewals_per_account_per_hour"`
}

func (l fleetLimits) tight() bool { return strings.HasPrefix(l.Mode, "tight") }

// weir's defaults (docs/rate-limits.md, acme.renewal-info).
const (
	defaultOrdersPerHour = 20
	defaultOrderBurst    = 5
	defaultSANPerHour    = 100
	defaultMaxRenewals   = 600
)

// fleetLimitsFor derives the limits of mode for perAccount clients per
// account: a client renews about once per 0.7 lifetimes (the middle of
// weir's default window, 60-80 % of the lifetime), so an account renews
// perAccount × 1h / (0.7 × lifetime) times an hour; tight allows factor
// times that in orders and names an hour (ARI renewals pay the SAN budget
// and are exempt from order-creation), the order burst holding the
// account's first certificates.
func fleetLimitsFor(mode string, factor float64, perAccount int, lifetime time.Duration, maxRenewals int) fleetLimits {
	per := float64(perAccount) * float64(time.Hour) / (0.7 * float64(lifetime))
	l := fleetLimits{Mode: mode, OrdersPerHour: defaultOrdersPerHour, OrderBurst: defaultOrderBurst, SANBudgetPerHour: defaultSANPerHour,
		MaxRenewalsPerHour: defaultMaxRenewals, ExpectedPerAcctHour: fmt.Sprintf("%.1f", per)}
	if maxRenewals > 0 {
		l.MaxRenewalsPerHour = maxRenewals
	}
	if mode == "tight" {
		l.Mode = fmt.Sprintf("tight (%g times the expected renewals)", factor)
		tight := max(1, int64(math.Ceil(factor*per)))
		l.OrdersPerHour, l.SANBudgetPerHour, l.OrderBurst = tight, tight, int64(max(perAccount, 1))
	}
	return l
}

// config is the YAML of the server as it stands.
func (s *fleetServer) config() string {
	var b strings.Builder
	fmt.Fprintf(&b, "data-dir: %q\n", s.dataDir)
	fmt.Fprintf(&b, "server:\n  listen: %q\n  http: { listen: \"\" }\n", s.listen)
	fmt.Fprintf(&b, "admin:\n  listen: %q\n", s.admin)
	b.WriteString("acme:\n")
	if s.limits.tight() {
		// The SAN budget may be below weir's 30 identifiers an order: the
		// fleet's orders have one.
		b.WriteString("  max-identifiers: 1\n")
	}
	if s.maxRenewals > 0 {
		fmt.Fprintf(&b, "  renewal-info: { max-renewals-per-hour: %d }\n", s.maxRenewals)
	}
	fmt.Fprintf(&b, "challenges:\n  http-01:\n    port: %d\n  dns-resolver: %q\n", s.httpPort, s.dnsAddr)
	b.WriteString("log:\n  level: warn\n")
	b.WriteString("ca:\n")
	fmt.Fprintf(&b, "  certificate-lifetime: %s\n  backdate: %s\n", s.lifetime, s.backdate)
	if s.renewEarlyA {
		b.WriteString("  intermediate: { renew-early: true }\n")
	}
	if s.issuerB {
		b.WriteString("  issuers:\n    - id: b\n  active-issuer: b\n")
	}
	// Every simulated client shares 127.0.0.1; real fleets do not.
	b.WriteString("rate-limiting:\n  whitelist: [\"127.0.0.1/32\"]\n")
	if s.limits.tight() {
		fmt.Fprintf(&b, "  order-creation: { orders-per-account-per-hour: %d, order-burst: %d, san-budget-per-account-per-hour: %d }\n",
			s.limits.OrdersPerHour, s.limits.OrderBurst, s.limits.SANBudgetPerHour)
	}
	return b.String()
}

func (s *fleetServer) configPath() string { return filepath.Join(s.dataDir, "weir.yaml") }

// start starts weir on its ports and waits until it serves its directory.
func (s *fleetServer) start(ctx context.Context) error {
	p, err := weirproc.Start(ctx, weirproc.Options{
		Bin: s.bin, DataDir: s.dataDir, Listen: s.listen, Config: s.config(), ReadyTimeout: 2 * time.Minute,
	})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// restart stops weir by its PID and starts it again on the same ports
// with the configuration as it stands; it returns how long the ACME
// listener was down.
func (s *fleetServer) restart(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	if err := s.proc.Stop(30 * time.Second); err != nil {
		return 0, fmt.Errorf("stopping weir (pid %d): %w", s.proc.PID, err)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ { // a port lingering a moment
		if err = s.start(ctx); err == nil {
			return time.Since(t0), nil
		}
		sleepUntil(ctx, time.Now().Add(2*time.Second))
	}
	return time.Since(t0), fmt.Errorf("starting weir again: %w", err)
}

// save writes the configuration as it stands over weir's file, which
// weir reloads when it changes.
func (s *fleetServer) save() error {
	tmp := s.configPath() + ".new"
	if err := os.WriteFile(tmp, []byte(s.config()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.configPath())
}

// cli runs a weir command line as the operator would.
func (s *fleetServer) cli(ctx context.Context, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, s.bin, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("weir %s: %w\n%s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// makeIssuerB is the rotation's step 1 up to the restart
// (docs/operations.md, "Rotating the intermediate"): a new key and CSR,
// the CSR signed with the root's key (which weir keeps in the data
// directory, ca/root-key.pem, until weir ca take-root-offline), and the
// issuer b added to the data directory. It returns the commands it ran
// and b's subject key identifier.
func (s *fleetServer) makeIssuerB(ctx context.Context, work string) ([]string, []byte, error) {
	key, csr, cert := filepath.Join(work, "b-key.pem"), filepath.Join(work, "b.csr"), filepath.Join(work, "b.pem")
	steps := [][]string{
		{"ca", "new-intermediate-key", "-name", "weir fleet drill Intermediate B", "-org", "weir", "-key-out", key, "-csr-out", csr},
		{"ca", "sign-intermediate", "-root-cert", filepath.Join(s.dataDir, "ca", "root.pem"), "-root-key", filepath.Join(s.dataDir, "ca", "root-key.pem"),
			"-csr", csr, "-out", cert, "-config", s.configPath()},
		{"ca", "add-issuer", "-config", s.configPath(), "-id", "b", "-cert", cert, "-key", key},
	}
	var ran []string
	for _, args := range steps {
		ran = append(ran, "weir "+strings.Join(args, " "))
		if _, err := s.cli(ctx, args...); err != nil {
			return ran, nil, err
		}
	}
	_ = os.Remove(key)
	ski, err := certSKI(filepath.Join(s.dataDir, "ca", "issuers", "b", "intermediate.pem"))
	return ran, ski, err
}

// certSKI is the subject key identifier of the first certificate of a
// PEM file.
func certSKI(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.SubjectKeyId) == 0 {
		return nil, fmt.Errorf("%s: no subject key identifier", path)
	}
	return c.SubjectKeyId, nil
}

// reloadRefused is the error weir logged when it refused a reload of the
// file, or "".
func (s *fleetServer) reloadRefused() string {
	data, err := os.ReadFile(s.proc.LogPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "configuration reload refused") {
			return lines[i]
		}
	}
	return ""
}

var errNoServer = errors.New("weir is not running")

// stop stops weir by its PID.
func (s *fleetServer) stop() error {
	if s.proc == nil {
		return errNoServer
	}
	return s.proc.Stop(30 * time.Second)
}
