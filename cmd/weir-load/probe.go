// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/ca"
)

// probeRounds is how many times the probe times each admin call and each
// revocation; it reports their median.
const probeRounds = 7

// probeResult is what -probe measured right after the server started.
type probeResult struct {
	FirstIssuanceMs float64   `json:"first_issuance_ms"` // the whole first issuance after start
	RSSAfter5sMiB   float64   `json:"rss_5s_mib"`        // VmRSS 5 s after the server was ready
	OverviewMs      []float64 `json:"overview_ms"`       // GET /api/v1/overview, each call
	SearchMissMs    []float64 `json:"search_miss_ms"`    // GET /api/v1/certs?q=<a name no certificate has>
	RevokeMs        []float64 `json:"revoke_ms"`         // POST /api/v1/certs/{serial}/revoke, each answer
}

// probe measures what a fleet's size could make slow at start, before
// any load: the first issuance (run at once, beside whatever the server
// does at start), the RSS 5 s after start, the admin overview, a search
// that finds nothing, and revocations through the admin API, each of a
// certificate issued by the probe (probeRounds of each, one at a time).
// With prof set, the server (started with -pprof) is CPU-profiled over
// the first 10 s into prof+".cpu" and its heap saved at 5 s into
// prof+".heap".
func probe(ctx context.Context, l *loader, srv *replica, ready time.Time, prof string, stderr io.Writer) (*probeResult, error) {
	profErr := make(chan error, 1)
	if prof != "" {
		go func() {
			hc := &http.Client{Timeout: time.Minute}
			profErr <- fetch(ctx, hc, "http://"+srv.pprofAddr+"/debug/pprof/profile?seconds=10", prof+".cpu")
		}()
	}
	res := &probeResult{}
	c := l.clients[0]
	t0 := time.Now()
	if _, err := l.issueOne(ctx, c, "first.probe.load.test", true); err != nil {
		return nil, fmt.Errorf("probe: first issuance: %w", err)
	}
	res.FirstIssuanceMs = ms(time.Since(t0))
	logf(stderr, "probe: first issuance after start %.1f ms", res.FirstIssuanceMs)

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Until(ready.Add(5 * time.Second))):
	}
	kb, err := srv.StatusKB("VmRSS")
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	res.RSSAfter5sMiB = float64(kb) / 1024
	logf(stderr, "probe: RSS 5 s after start %.1f MiB", res.RSSAfter5sMiB)
	if prof != "" {
		hc := &http.Client{Timeout: time.Minute}
		if err := fetch(ctx, hc, "http://"+srv.pprofAddr+"/debug/pprof/heap", prof+".heap"); err != nil {
			return nil, fmt.Errorf("probe: heap profile: %w", err)
		}
	}

	admin, err := newAdminClient(srv)
	if err != nil {
		return nil, err
	}
	for range probeRounds {
		d, err := admin.call(ctx, http.MethodGet, "/api/v1/overview", "")
		if err != nil {
			return nil, err
		}
		res.OverviewMs = append(res.OverviewMs, d)
		if d, err = admin.call(ctx, http.MethodGet, "/api/v1/certs?q=no-such-name.probe.invalid", ""); err != nil {
			return nil, err
		}
		res.SearchMissMs = append(res.SearchMissMs, d)
	}
	for i := range probeRounds {
		leaf, err := l.issueOne(ctx, c, fmt.Sprintf("revoke-%d.probe.load.test", i), false)
		if err != nil {
			return nil, fmt.Errorf("probe: issuance %d: %w", i, err)
		}
		d, err := admin.call(ctx, http.MethodPost, "/api/v1/certs/"+ca.SerialHex(leaf.SerialNumber)+"/revoke", `{"reason":"superseded"}`)
		if err != nil {
			return nil, err
		}
		res.RevokeMs = append(res.RevokeMs, d)
	}
	logf(stderr, "probe: overview %s ms; search miss %s ms; revoke %s ms (each call, in order)",
		fmtMs(res.OverviewMs), fmtMs(res.SearchMissMs), fmtMs(res.RevokeMs))
	logf(stderr, "probe: medians: overview %.1f ms, search miss %.1f ms, revoke %.1f ms",
		medianMs(res.OverviewMs), medianMs(res.SearchMissMs), medianMs(res.RevokeMs))
	if prof != "" {
		if err := <-profErr; err != nil {
			return nil, fmt.Errorf("probe: CPU profile: %w", err)
		}
		logf(stderr, "probe: profiles in %s.cpu and %s.heap", prof, prof)
	}
	return res, nil
}

// adminClient calls a replica's admin API with the data directory's
// admin token.
type adminClient struct {
	hc    *http.Client
	base  string
	token string
}

func newAdminClient(srv *replica) (*adminClient, error) {
	tok, err := os.ReadFile(filepath.Join(srv.DataDir, "admin-token"))
	if err != nil {
		return nil, fmt.Errorf("admin token: %w", err)
	}
	// The load tool's configuration gives the admin listener no TLS: it
	// serves plain HTTP on loopback.
	return &adminClient{hc: &http.Client{Timeout: time.Minute}, base: "http://" + srv.adminAddr, token: strings.TrimSpace(string(tok))}, nil
}

// call makes one request and returns how long the answer took, in ms;
// an answer other than 200 is an error.
func (a *adminClient) call(ctx context.Context, method, path, body string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	t0 := time.Now()
	res, err := a.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("probe: %s %s: %w", method, path, err)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	d := ms(time.Since(t0))
	res.Body.Close()
	if err != nil {
		return 0, fmt.Errorf("probe: %s %s: %w", method, path, err)
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("probe: %s %s: %s: %.200s", method, path, res.Status, b)
	}
	return d, nil
}

func medianMs(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

func fmtMs(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, " ")
}
