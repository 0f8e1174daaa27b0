// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/internal/audit"
	"github.com/weir-pki/weir/web/admin"
)

// maxBatchesPerTick bounds the integrations of one sequencer tick: a
// backlog (after the sequencer was down) drains a few thousand entries a
// tick, and the lease is renewed between ticks.
const maxBatchesPerTick = 8

// logStateTimeout bounds the store reads of a scrape or a /readyz.
const logStateTimeout = time.Second

// sequencerErrorEvery is how often a sequencer that keeps failing logs
// it; every failure is counted (weir_log_sequencer_errors_total).
const sequencerErrorEvery = time.Minute

// verifiableLog is the server's side of the verifiable log: the
// sequencer it runs under a lease, the metrics and readiness warning of
// the log's lag, and what the admin API reads.
type verifiableLog struct {
	cfg     TransparencyConfig
	key     *logKey
	store   transparency.Store
	seq     *transparency.Sequencer
	metrics *admin.LogMetrics
	log     *slog.Logger
	now     func() time.Time
	// cosign asks the witnesses to cosign; nil without witnesses.
	cosign *cosigner

	mu         sync.Mutex
	lastLogged time.Time // of a sequencer failure
}

// newVerifiableLog opens the log of cfg over st, nil when it is off.
func newVerifiableLog(ctx context.Context, cfg Config, st transparency.Store, log *slog.Logger) (*verifiableLog, error) {
	if !cfg.Transparency.Enabled {
		return nil, nil
	}
	key, err := openLogKey(ctx, cfg, st)
	if err != nil {
		return nil, err
	}
	l := &verifiableLog{cfg: cfg.Transparency, key: key, store: st, log: log, now: time.Now}
	l.seq = &transparency.Sequencer{Store: st, Signer: key.signer, Verifier: key.verifier, Integrated: l.integrated}
	if l.cosign, err = newCosigner(cfg.Transparency, st, key.verifier, log, func() *admin.LogMetrics { return l.metrics }); err != nil {
		key.close()
		return nil, err
	}
	return l, nil
}

// setMetrics exports the log's metrics in m.
func (l *verifiableLog) setMetrics(m *admin.Metrics) {
	l.metrics = m.SetLog(func() (admin.LogState, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), logStateTimeout)
		defer cancel()
		st, err := l.state(ctx)
		return st, err == nil
	})
}

// run sequences the log on one replica at a time, and asks the
// witnesses to cosign on one replica at a time, until ctx ends: two jobs,
// so that a witness that is slow or down never holds up the sequencer.
func (l *verifiableLog) run(ctx context.Context, svc *acme.Service) error {
	if l.cosign == nil {
		return svc.RunLeased(ctx, leaseLogSequencer, l.cfg.Interval, l.tick)
	}
	done := make(chan error, 1)
	go func() { done <- svc.RunLeased(ctx, leaseLogCosigner, l.cfg.Interval, l.cosign.run) }()
	err := svc.RunLeased(ctx, leaseLogSequencer, l.cfg.Interval, l.tick)
	if cerr := <-done; err == nil {
		err = cerr
	}
	return err
}

// tick integrates the pending entries, a few batches at most. Another
// sequencer's batch (acme.ErrConflict: a replica whose lease ended while
// it was stalled) is no failure: the next tick starts from its tree.
func (l *verifiableLog) tick(ctx context.Context) error {
	for range maxBatchesPerTick {
		_, n, err := l.seq.Integrate(ctx)
		if errors.Is(err, acme.ErrConflict) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.metrics.SequencerError()
			return l.throttled(err)
		}
		if n < transparency.DefaultMaxBatch {
			return nil
		}
	}
	return nil
}

// throttled returns err to be logged at most once per
// sequencerErrorEvery, nil otherwise.
func (l *verifiableLog) throttled(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.lastLogged) >= sequencerErrorEvery {
		l.lastLogged = now
		return fmt.Errorf("the verifiable log's entries stay pending (logged once a minute while it fails): %w", err)
	}
	return nil
}

// integrated observes the lag of each entry of a stored batch.
func (l *verifiableLog) integrated(b []transparency.PendingEntry) {
	if l.metrics == nil {
		return
	}
	now := l.now()
	for _, p := range b {
		if t, err := transparency.EntryTime(p.Entry); err == nil {
			l.metrics.ObserveLag(now.Sub(t))
		}
	}
}

// state reads the tree's size and the wait of the oldest pending entry.
func (l *verifiableLog) state(ctx context.Context) (admin.LogState, error) {
	size, _, err := l.store.LogHead(ctx)
	if err != nil {
		return admin.LogState{}, err
	}
	st := admin.LogState{Size: size, Served: size}
	if l.cfg.WitnessesRequired > 0 {
		if st.Served, _, err = l.store.LogServed(ctx); err != nil {
			return admin.LogState{}, err
		}
	}
	p, err := l.store.PendingLogEntries(ctx, 1)
	if err != nil {
		return admin.LogState{}, err
	}
	if len(p) > 0 {
		if t, err := transparency.EntryTime(p[0].Entry); err == nil {
			st.Oldest = max(l.now().Sub(t), 0)
		}
	}
	return st, nil
}

// warning is /readyz's warning when an entry has waited longer than
// transparency.max-lag: issuance goes on (its entries are written), and
// the tree and the served checkpoint fall behind.
func (l *verifiableLog) warning(ctx context.Context) string {
	st, err := l.state(ctx)
	if err != nil {
		return "cannot read the verifiable log's state: " + err.Error()
	}
	if st.Oldest > l.cfg.MaxLag {
		return fmt.Sprintf("the verifiable log is behind: its oldest pending entry has waited %s (transparency.max-lag %s); the sequencer or the log key is down, issuance continues and its entries queue",
			st.Oldest.Round(time.Second), l.cfg.MaxLag)
	}
	return ""
}

// Info implements admin.TransparencyLog.
func (l *verifiableLog) Info(ctx context.Context) (admin.LogInfo, error) {
	st, err := l.state(ctx)
	if err != nil {
		return admin.LogInfo{}, err
	}
	_, cp, err := l.store.LogHead(ctx)
	if err != nil {
		return admin.LogInfo{}, err
	}
	return admin.LogInfo{Origin: l.key.signer.Name(), VerifierKey: l.key.String(), Size: st.Size, Checkpoint: string(cp),
		OldestPendingSeconds: st.Oldest.Seconds(), MaxLagSeconds: l.cfg.MaxLag.Seconds(), Behind: st.Oldest > l.cfg.MaxLag}, nil
}

// Prove implements admin.TransparencyLog: the inclusion proof of the
// certificate serial against the checkpoint served (the latest, or with
// witnesses required the newest they cosigned enough).
func (l *verifiableLog) Prove(ctx context.Context, serial string) (any, error) {
	if l.cfg.WitnessesRequired == 0 {
		return transparency.ProveSerial(ctx, l.store, serial)
	}
	idx, err := l.store.LogIndexOf(ctx, serial)
	if err != nil {
		return nil, err
	}
	served, _, err := l.store.LogServed(ctx)
	if err != nil {
		return nil, err
	}
	if idx >= served {
		return nil, fmt.Errorf("the entry of %s (index %d) is not in the served tree of size %d yet, which waits for the witnesses: %w", serial, idx, served, acme.ErrNotFound)
	}
	return transparency.ProveSerial(ctx, servedView{l.store}, serial)
}

// servedView is a log whose head is its served checkpoint.
type servedView struct{ transparency.Store }

func (v servedView) LogHead(ctx context.Context) (int64, []byte, error) {
	return v.Store.LogServed(ctx)
}

// event writes ev (an administrator's action, a reload, a start) to the
// log in a transaction of its own. The audit file has it already; a
// failure is logged.
func (l *verifiableLog) event(ctx context.Context, ev audit.Event) {
	if l == nil {
		return
	}
	e := transparency.Entry{V: transparency.EntryVersion, Kind: transparency.KindEvent, Time: l.now().UTC(),
		Actor: transparency.Actor{Kind: ev.Actor.Kind, ID: ev.Actor.ID, Address: ev.Actor.Address}, Event: &transparency.Event{Type: ev.Type}}
	if len(ev.Data) > 0 {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			l.log.Error("verifiable log: encoding an event", "type", ev.Type, "err", err)
			return
		}
		e.Event.Data = data
	}
	b, err := transparency.EncodeEntry(e)
	if err == nil {
		err = l.store.AppendLogEntry(ctx, b)
	}
	if err != nil {
		l.log.Error("verifiable log: the event was not written to the log (the audit trail has it)", "type", ev.Type, "err", err)
	}
}

// close releases the log key.
func (l *verifiableLog) close() error {
	if l == nil {
		return nil
	}
	return l.key.close()
}

// runLog runs the verifiable log's sequencer until ctx ends, after
// recording this process's start in the log; nothing when it is off.
func (s *Server) runLog(ctx context.Context) error {
	if s.vlog == nil {
		return nil
	}
	s.vlog.event(ctx, audit.Event{Type: eventStarted, Actor: audit.Actor{Kind: "system", ID: s.cfg.Audit.replica()},
		Data: map[string]any{"verifier_key": s.vlog.key.String()}})
	return s.vlog.run(ctx, s.svc)
}

// eventStarted is the log's entry of a process's start: which replica,
// with which log key, so that the log shows every restart.
const eventStarted = "server-started"

// logHandler serves the verifiable log's checkpoint and tiles; nil when
// it is off.
func (s *Server) logHandler() http.Handler {
	if s.vlog == nil {
		return nil
	}
	if s.cfg.Transparency.WitnessesRequired > 0 {
		return transparency.NewServedHandler(s.store)
	}
	return transparency.NewHandler(s.store)
}

// adminLog is the log the admin API reads; nil when it is off.
func (s *Server) adminLog() admin.TransparencyLog {
	if s.vlog == nil {
		return nil
	}
	return s.vlog
}
