// SPDX-License-Identifier: Apache-2.0

// -log: the verifiable log's integration lag over a run, from the
// histogram weir exports (weir_log_integration_lag_seconds).

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// lagHistogram is the cumulative count of each bucket of the lag
// histogram, by its upper bound (+Inf included), and the gauge of the
// oldest pending entry's wait.
type lagHistogram struct {
	buckets map[float64]float64
	oldest  float64
}

// scrapeLag reads the lag histogram from a replica's /metrics.
func scrapeLag(ctx context.Context, a *adminClient) (lagHistogram, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/metrics", nil)
	if err != nil {
		return lagHistogram{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := a.hc.Do(req)
	if err != nil {
		return lagHistogram{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return lagHistogram{}, fmt.Errorf("/metrics: %s", res.Status)
	}
	return parseLag(res.Body)
}

// parseLag reads the lag's buckets and the oldest pending wait from the
// Prometheus text format.
func parseLag(r io.Reader) (lagHistogram, error) {
	h := lagHistogram{buckets: map[float64]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		switch {
		case name == "weir_log_oldest_pending_seconds":
			h.oldest = v
		case strings.HasPrefix(name, `weir_log_integration_lag_seconds_bucket{le="`):
			le := strings.TrimSuffix(strings.TrimPrefix(name, `weir_log_integration_lag_seconds_bucket{le="`), `"}`)
			b, err := strconv.ParseFloat(le, 64)
			if err != nil {
				return h, fmt.Errorf("lag bucket %q: %v", le, err)
			}
			h.buckets[b] = v
		}
	}
	if len(h.buckets) == 0 {
		return h, fmt.Errorf("no weir_log_integration_lag_seconds on /metrics: is the log on?")
	}
	return h, sc.Err()
}

// p99Since bounds the 99th percentile of the entries integrated between
// before and h: the upper edge of the first bucket whose count since
// before reaches 99 % (+Inf when it is the last).
func (h lagHistogram) p99Since(before lagHistogram) float64 {
	les := slices.Sorted(func(yield func(float64) bool) {
		for le := range h.buckets {
			if !yield(le) {
				return
			}
		}
	})
	total := h.buckets[math.Inf(1)] - before.buckets[math.Inf(1)]
	if total <= 0 {
		return 0
	}
	for _, le := range les {
		if h.buckets[le]-before.buckets[le] >= 0.99*total {
			return le
		}
	}
	return math.Inf(1)
}

// settle waits (at most 10 s) until nothing waits to be integrated, so
// that a run's last entries count in its lag.
func settle(ctx context.Context, a *adminClient) (lagHistogram, error) {
	var h lagHistogram
	var err error
	for range 100 {
		if h, err = scrapeLag(ctx, a); err != nil || h.oldest == 0 {
			return h, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return h, nil
}

// logLagNote is a run's log lag for its progress line; "" with the log
// off.
func logLagNote(r runResult) string {
	if r.LogLagP99Sec == 0 {
		return ""
	}
	return fmt.Sprintf(", log lag p99 ≤ %g s", r.LogLagP99Sec)
}
