// SPDX-License-Identifier: Apache-2.0

// -fleet N runs the fleet against a weir of its own: the first
// certificates ramped in on issuer A (default), a steady state, and with
// -drill the rotation of docs/operations.md ("Rotating the intermediate")
// as an operator does it: issuer b made with weir's command line and made
// active by a restart (step 1), renew-early set on the default issuer
// (step 2), then the fleet run until every client holds a certificate of
// B or A's deadline (the latest expiry of A's certificates at step 1),
// with -drill-grace, has passed.

package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/internal/dnstest"
	"github.com/weir-pki/weir/internal/weirproc"
)

// runFleet is -fleet's main: it prints the report and returns the exit
// code (1 for an error or a failed drill).
func runFleet(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	rep, err := fleetRun(ctx, o, stderr)
	if rep != nil {
		writeReport(stdout, o.json, rep, func() { printFleet(stdout, rep) })
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "weir-load: -fleet: %v\n", err)
		return 1
	case rep.Drill != nil && !rep.Drill.Passed:
		fmt.Fprintln(stderr, "weir-load: the drill failed: see its summary")
		return 1
	}
	return 0
}

// fleetRun starts weir and the fleet and runs the phases; the report is
// returned with an error too when there is one to give.
func fleetRun(ctx context.Context, o *options, stderr io.Writer) (*fleetReport, error) {
	tmp, err := os.MkdirTemp("", "weir-fleet-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if !o.keep {
			os.RemoveAll(tmp)
		} else {
			logf(stderr, "kept %s", tmp)
		}
	}()
	bin, rev := o.weir, ""
	if bin == "" {
		logf(stderr, "building weir")
		if bin, err = weirproc.Build(ctx, tmp); err != nil {
			return nil, err
		}
		rev = weirproc.GitRev(ctx)
	}
	dataDir := o.dataDir
	if dataDir == "" {
		dataDir = filepath.Join(tmp, "data")
	}
	dns, err := dnstest.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer dns.Close()
	dns.SetDefaultAddrs(netip.MustParseAddr("127.0.0.1"))
	resp, err := startResponder()
	if err != nil {
		return nil, err
	}
	defer resp.close()
	addrs, err := weirproc.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	srv := &fleetServer{
		bin: bin, dataDir: dataDir, listen: addrs[0], admin: addrs[1], dnsAddr: dns.Addr(), httpPort: resp.port,
		lifetime: o.fleetLifetime, backdate: min(time.Minute, o.fleetLifetime/2),
		limits:      fleetLimitsFor(o.fleetLimits, o.fleetTightFactor, o.fleetPerAccount, o.fleetLifetime, o.fleetMaxRenewals),
		maxRenewals: o.fleetMaxRenewals,
	}
	if err := srv.start(ctx); err != nil {
		return nil, err
	}
	defer func() {
		if err := srv.stop(); err != nil {
			logf(stderr, "stopping weir: %v", err)
		}
	}()
	rep := &fleetReport{
		Weir: bin, WeirRev: rev, DataDir: dataDir, DataDirKept: o.keep || o.dataDir != "",
		AdminURL: "http://" + srv.admin + "/", AdminTokenFile: filepath.Join(dataDir, "admin-token"),
		ACMEURL: srv.proc.Base + "/directory", ServerLog: srv.proc.LogPath,
		Clients: o.fleet, PerAccount: o.fleetPerAccount, Lifetime: o.fleetLifetime.String(), Backdate: srv.backdate.String(),
		Ramp: o.fleetRamp.String(), Steady: o.fleetSteady.String(), Limits: srv.limits,
		CeilingPerMin: float64(srv.limits.MaxRenewalsPerHour) / 60,
	}
	logf(stderr, "weir pid %d at %s; data dir %s; admin %s (token in %s)", srv.proc.PID, rep.ACMEURL, dataDir, rep.AdminURL, rep.AdminTokenFile)
	aSKI, err := certSKI(filepath.Join(dataDir, "ca", "intermediate.pem"))
	if err != nil {
		return rep, err
	}
	conn, err := newACMEConn(ctx, fleetHTTPClient(srv.proc.Roots), rep.ACMEURL)
	if err != nil {
		return rep, err
	}
	regCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	stats := newFleetStats(time.Now(), "setup")
	f, err := newFleet(regCtx, conn, resp, stats, o.fleet, o.fleetPerAccount, o.fleetTrace, stderr)
	cancel()
	if err != nil {
		return rep, err
	}
	f.issuers.a = aSKI
	f.view = newWeirView(rep.AdminURL, rep.AdminTokenFile)
	rep.Accounts = f.accts
	rep.SANBudgetPerMin = float64(int64(f.accts)*srv.limits.SANBudgetPerHour) / 60

	runCtx, stopRun := context.WithTimeout(ctx, o.fleetMax)
	defer stopRun()
	clientsCtx, stopClients := context.WithCancel(runCtx)
	defer stopClients()
	stats = newFleetStats(time.Now(), "ramp")
	f.stats = stats
	rep.Start = stats.start
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); f.watch(watchCtx, stderr) }()
	wait := f.start(clientsCtx, o.fleetRamp)
	logf(stderr, "%d clients started, their first certificates over %s", o.fleet, o.fleetRamp)

	var runErr error
	if sleepUntil(runCtx, stats.start.Add(o.fleetRamp)) {
		stats.setPhase("steady")
		if sleepUntil(runCtx, time.Now().Add(o.fleetSteady)) && o.drill {
			rep.Drill = &drillReport{RenewEarlySeenSec: -1}
			runErr = drill(runCtx, o, srv, f, rep.Drill, tmp, stderr)
		}
	}
	end := time.Now()
	stopClients()
	wait()
	stopWatch()
	<-watched
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	if runErr == nil && o.drill && rep.Drill == nil {
		runErr = fmt.Errorf("-fleet-max (%s) ended the run before the drill's step 1", o.fleetMax)
	}
	onA, onB, expired := f.counts(end)
	stats.gauges(end, onA, onB, expired)
	rep.Minutes, rep.ErrorKinds, rep.Notes = stats.snapshot(end)
	rep.ElapsedSec = end.Sub(stats.start).Seconds()
	rep.total(stats)
	if d := rep.Drill; d != nil {
		d.Passed = runErr == nil && rep.Totals.Lapsed == 0 && rep.Totals.LimitedPastExpiry == 0 && d.AllOnBBeforeDeadline
	}
	return rep, runErr
}

// drill runs the operator's steps of the rotation and then the fleet
// until every client is on B or A's deadline (plus o.drillGrace) passes.
func drill(ctx context.Context, o *options, srv *fleetServer, f *fleet, d *drillReport, work string, stderr io.Writer) error {
	stats := f.stats
	since := func() float64 { return time.Since(stats.start).Seconds() }

	// Step 1: issuer b, listed and active, and a restart.
	stats.setPhase("step1")
	d.Step1AtSec = since()
	d.ADeadline = f.latestNotAfter()
	if d.ADeadline.IsZero() {
		d.ADeadline = time.Now().Add(o.fleetLifetime)
	}
	logf(stderr, "step 1: making issuer b; A's deadline is %s", d.ADeadline.UTC().Format(time.TimeOnly))
	cmds, ski, err := srv.makeIssuerB(ctx, work)
	d.Commands = cmds
	if err != nil {
		return fmt.Errorf("step 1: %w", err)
	}
	f.issuers.b.Store(&ski)
	srv.issuerB = true
	down, err := srv.restart(ctx)
	d.RestartDowntimeSec = down.Seconds()
	d.Commands = append(d.Commands, "edit "+srv.configPath()+": ca.issuers [- id: b], ca.active-issuer: b", "restart weir (SIGTERM, then weir serve on the same ports)")
	if err != nil {
		return fmt.Errorf("step 1: %w", err)
	}
	f.conn.dropNonces()
	logf(stderr, "step 1: weir restarted with issuer b active (pid %d, down %.1fs)", srv.proc.PID, down.Seconds())
	stats.setPhase("B active")

	// Step 2: renew-early on the default issuer, reloaded live.
	if !sleepUntil(ctx, time.Now().Add(o.drillStep2After)) {
		return ctx.Err()
	}
	stats.setPhase("renew-early")
	d.Step2AtSec = since()
	step2 := time.Now()
	probe := f.someCertOnA()
	var before [2]time.Time
	if probe != "" {
		before[0], before[1], _, _ = f.conn.renewalInfo(ctx, probe)
	}
	srv.renewEarlyA = true
	if err := srv.save(); err != nil {
		return fmt.Errorf("step 2: %w", err)
	}
	d.Commands = append(d.Commands, "edit "+srv.configPath()+": ca.intermediate.renew-early: true (weir reloads it)")
	if probe == "" {
		d.RenewEarlyNote = "no certificate of A was left to see renew-early through ARI"
	} else if seen := waitRenewEarly(ctx, f.conn, probe, before, time.Minute); seen >= 0 {
		d.RenewEarlySeenSec = seen.Seconds()
		logf(stderr, "step 2: renew-early seen through ARI after %.1fs", seen.Seconds())
	} else {
		d.RenewEarlyNote = "renew-early not seen through ARI within a minute"
		if line := srv.reloadRefused(); line != "" {
			d.RenewEarlyNote += "; weir logged: " + line
		}
		logf(stderr, "step 2: %s", d.RenewEarlyNote)
	}

	// Until every client is on B or the deadline.
	deadline := d.ADeadline.Add(o.drillGrace)
	if after := time.Until(deadline); after > 0 {
		timer := time.NewTimer(after)
		defer timer.Stop()
		select {
		case <-f.allOnB:
		case <-timer.C:
		case <-ctx.Done():
		}
	}
	if at := f.allOnBAt.Load(); at != 0 {
		t := time.Unix(0, at)
		d.AllOnB = true
		d.AllOnBAtSec = t.Sub(stats.start).Seconds()
		d.MigrationSec = t.Sub(step2).Seconds()
		d.AllOnBBeforeDeadline = t.Before(d.ADeadline)
		logf(stderr, "every client holds a certificate of B, %.0fs after step 2", d.MigrationSec)
	} else if ctx.Err() != nil {
		logf(stderr, "the run ended (-fleet-max, or interrupted) before every client was on B")
	} else {
		logf(stderr, "not every client is on B at the deadline, A's latest expiry and -drill-grace")
	}
	vctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	d.WeirAtEnd, _ = f.view.issuers(vctx)
	cancel()
	d.WeirPlan = f.view.planSeen()
	stats.setPhase("done")
	return nil
}

// waitRenewEarly polls the renewalInfo of certID, a certificate of A,
// until its window is no longer before (the window before step 2) and
// has ended: renew-early applied. It returns how long that took, or -1.
func waitRenewEarly(ctx context.Context, conn *acmeConn, certID string, before [2]time.Time, limit time.Duration) time.Duration {
	t0 := time.Now()
	for time.Since(t0) < limit {
		start, end, _, err := conn.renewalInfo(ctx, certID)
		if err == nil && (!start.Equal(before[0]) || !end.Equal(before[1])) && !end.After(time.Now()) {
			return time.Since(t0)
		}
		if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
			break
		}
	}
	return -1
}
