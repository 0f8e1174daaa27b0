// SPDX-License-Identifier: Apache-2.0

// The report: per-run and per-level results, medians, the table.

package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// runResult is one run of one level.
type runResult struct {
	Concurrency        int            `json:"concurrency"`
	Run                int            `json:"run"`
	Certs              int            `json:"certs"`
	Errors             int            `json:"errors"`
	ErrorKinds         map[string]int `json:"error_kinds,omitempty"`
	ElapsedSec         float64        `json:"elapsed_s"`
	CertsPerSec        float64        `json:"certs_per_s"`
	ServerCPUSec       float64        `json:"server_cpu_s"`
	ServerCPUMsPerCert float64        `json:"server_cpu_ms_per_cert"`
	// ReplicaCPUMsPerCert is each replica's share of ServerCPUMsPerCert,
	// with several replicas.
	ReplicaCPUMsPerCert []float64 `json:"replica_cpu_ms_per_cert,omitempty"`
	StoreCPUSec         float64   `json:"store_cpu_s"`
	StoreCPUMsPerCert   float64   `json:"store_cpu_ms_per_cert"`
	ClientCPUMsPerCert  float64   `json:"client_cpu_ms_per_cert"`
	MachineBusyPct      float64   `json:"machine_busy_pct"`
	OtherCPUCores       float64   `json:"other_cpu_cores"`
	P50Ms               float64   `json:"p50_ms"`
	P99Ms               float64   `json:"p99_ms"`
	MaxMs               float64   `json:"max_ms"`
	ServerRSSMaxMiB     float64   `json:"server_rss_max_mib"`
	ServerHWMMiB        float64   `json:"server_vmhwm_mib"`
	RequestsPerCert     float64   `json:"requests_per_cert"`
	// LogLagP99Sec bounds the 99th percentile of the verifiable log's
	// integration lag over the run (the upper edge of its histogram
	// bucket); 0 with the log off.
	LogLagP99Sec float64 `json:"log_lag_p99_s,omitempty"`
	// PG is what the run sent PostgreSQL per certificate (-count-pg).
	PG        *pgPerCert `json:"postgres,omitempty"`
	Attempts  int        `json:"attempts,omitempty"`
	Disturbed bool       `json:"disturbed,omitempty"`
	Stalled   bool       `json:"stalled,omitempty"`
	StallNote string     `json:"stall_note,omitempty"`
}

// levelResult is the median of a level's runs.
type levelResult struct {
	Concurrency int         `json:"concurrency"`
	Median      runResult   `json:"median"`
	ErrorsTotal int         `json:"errors_total"`
	Runs        []runResult `json:"runs"`
}

type report struct {
	Weir        string           `json:"weir"`
	WeirRev     string           `json:"weir_rev,omitempty"`
	GoVersion   string           `json:"go"`
	CPUs        int              `json:"cpus"`
	ClkTck      int64            `json:"clk_tck"`
	Mode        string           `json:"mode"`
	Replicas    int              `json:"replicas"`
	Storage     string           `json:"storage"`
	Redis       string           `json:"redis"`
	RateLimits  string           `json:"ratelimits"`
	Protocols   map[string]int64 `json:"protocols"`
	Levels      []levelResult    `json:"levels"`
	Stalled     bool             `json:"stalled"`
	StallDump   string           `json:"stall_dump,omitempty"`
	CPUProfile  string           `json:"cpu_profile,omitempty"`
	Probe       *probeResult     `json:"probe,omitempty"`
	ServerLog   string           `json:"server_log,omitempty"` // replica 1's
	ReplicaList []replicaReport  `json:"replica_list"`
}

// replicaReport is one replica in the report.
type replicaReport struct {
	PID         int    `json:"pid"`
	Listen      string `json:"listen"`
	DataDir     string `json:"data_dir"`
	Log         string `json:"log"`
	Connections int64  `json:"connections,omitempty"` // the client's, with several replicas
}

// replicaReports describes the replicas and the client's connections to
// each.
func (cl *cluster) replicaReports() []replicaReport {
	var dials map[string]int64
	if cl.rr != nil {
		dials = cl.rr.Dials()
	}
	out := make([]replicaReport, len(cl.replicas))
	for i, r := range cl.replicas {
		out[i] = replicaReport{PID: r.PID, Listen: r.Listen, DataDir: r.DataDir, Log: r.LogPath, Connections: dials[r.Listen]}
	}
	return out
}

// medianOf takes the median of each metric over the runs separately.
func medianOf(runs []runResult) runResult {
	med := func(f func(runResult) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	m := runResult{Concurrency: runs[0].Concurrency}
	m.Certs = int(med(func(r runResult) float64 { return float64(r.Certs) }))
	m.Errors = int(med(func(r runResult) float64 { return float64(r.Errors) }))
	m.ElapsedSec = med(func(r runResult) float64 { return r.ElapsedSec })
	m.CertsPerSec = med(func(r runResult) float64 { return r.CertsPerSec })
	m.ServerCPUSec = med(func(r runResult) float64 { return r.ServerCPUSec })
	m.ServerCPUMsPerCert = med(func(r runResult) float64 { return r.ServerCPUMsPerCert })
	for i := range runs[0].ReplicaCPUMsPerCert {
		m.ReplicaCPUMsPerCert = append(m.ReplicaCPUMsPerCert, med(func(r runResult) float64 {
			if i < len(r.ReplicaCPUMsPerCert) {
				return r.ReplicaCPUMsPerCert[i]
			}
			return 0
		}))
	}
	m.StoreCPUSec = med(func(r runResult) float64 { return r.StoreCPUSec })
	m.StoreCPUMsPerCert = med(func(r runResult) float64 { return r.StoreCPUMsPerCert })
	m.ClientCPUMsPerCert = med(func(r runResult) float64 { return r.ClientCPUMsPerCert })
	m.MachineBusyPct = med(func(r runResult) float64 { return r.MachineBusyPct })
	m.OtherCPUCores = med(func(r runResult) float64 { return r.OtherCPUCores })
	m.P50Ms = med(func(r runResult) float64 { return r.P50Ms })
	m.P99Ms = med(func(r runResult) float64 { return r.P99Ms })
	m.MaxMs = med(func(r runResult) float64 { return r.MaxMs })
	m.ServerRSSMaxMiB = med(func(r runResult) float64 { return r.ServerRSSMaxMiB })
	m.ServerHWMMiB = slices.MaxFunc(runs, func(a, b runResult) int { return cmpF(a.ServerHWMMiB, b.ServerHWMMiB) }).ServerHWMMiB
	m.RequestsPerCert = med(func(r runResult) float64 { return r.RequestsPerCert })
	m.LogLagP99Sec = med(func(r runResult) float64 { return r.LogLagP99Sec })
	for _, r := range runs {
		m.Stalled = m.Stalled || r.Stalled
		m.Disturbed = m.Disturbed || r.Disturbed
	}
	return m
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func printTable(w io.Writer, rep *report) {
	fmt.Fprintf(w, "weir-load: %s %s, %s, rate limits %s, %d CPUs, %s; client protocols %v\n", rep.Weir, rep.WeirRev, rep.Mode, rep.RateLimits, rep.CPUs, rep.GoVersion, rep.Protocols)
	fmt.Fprintf(w, "replicas %d, storage %s, redis %s", rep.Replicas, rep.Storage, rep.Redis)
	if rep.Replicas > 1 {
		conns := make([]string, len(rep.ReplicaList))
		for i, r := range rep.ReplicaList {
			conns[i] = strconv.FormatInt(r.Connections, 10)
		}
		fmt.Fprintf(w, "; client connections per replica %s", strings.Join(conns, "/"))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "c\tcerts/s\tsrv CPU ms/cert\tstore CPU ms/cert\tcli CPU ms/cert\tbusy %\tother cores\tp50 ms\tp99 ms\terrors\tRSS max MiB\tVmHWM MiB\treq/cert\truns\t")
	for _, l := range rep.Levels {
		m := l.Median
		fmt.Fprintf(tw, "%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.0f\t%.2f\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%d\t\n",
			l.Concurrency, m.CertsPerSec, m.ServerCPUMsPerCert, m.StoreCPUMsPerCert, m.ClientCPUMsPerCert, m.MachineBusyPct, m.OtherCPUCores,
			m.P50Ms, m.P99Ms, l.ErrorsTotal, m.ServerRSSMaxMiB, m.ServerHWMMiB, m.RequestsPerCert, len(l.Runs))
	}
	tw.Flush()
	fmt.Fprintln(w, "(medians over the runs; errors is the total; VmHWM is the largest seen; srv CPU, RSS and VmHWM are summed over the replicas;")
	fmt.Fprintln(w, " store CPU: PostgreSQL's processes and a private redis-server, 0 for SQLite (in weir's); other cores: CPU of other processes during the runs)")
	for _, l := range rep.Levels {
		if each := l.Median.ReplicaCPUMsPerCert; len(each) > 0 {
			v := make([]string, len(each))
			for i, ms := range each {
				v[i] = fmt.Sprintf("%.2f", ms)
			}
			fmt.Fprintf(w, "c=%d: server CPU ms/cert by replica %s\n", l.Concurrency, strings.Join(v, " / "))
		}
	}
	for _, l := range rep.Levels {
		if l.Median.Disturbed {
			fmt.Fprintf(w, "WARNING: c=%d has runs disturbed by other processes (see -json)\n", l.Concurrency)
		}
	}
	if rep.Stalled {
		fmt.Fprintf(w, "STALL: goroutines in %s\n", rep.StallDump)
	}
	if rep.CPUProfile != "" {
		fmt.Fprintf(w, "server CPU profile: %s (go tool pprof -top %s)\n", rep.CPUProfile, rep.CPUProfile)
	}
}
