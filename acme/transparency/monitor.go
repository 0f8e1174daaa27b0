// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
)

// Reason is the kind of an alarm a monitor raises.
type Reason string

// The reasons of a monitor's alarms. All but ReasonStale are integrity
// alarms: the log served something that cannot be the append-only log it
// signed, and the alarm sticks (it is kept in the state file and raised
// again at every check until an operator clears it). Staleness is not
// the log's fault alone and clears when a checkpoint verifies again.
const (
	// ReasonFork is a history rewritten: a checkpoint of the size held
	// with another root, or a larger one that the held one is not a
	// prefix of (an entry deleted, inserted or rewritten, a new tree).
	ReasonFork Reason = "fork"
	// ReasonRewind is a checkpoint of a smaller tree than the one held.
	ReasonRewind Reason = "rewind"
	// ReasonBadSignature is a served checkpoint that does not verify with
	// the log's key (or a witness's cosignature on it that does not).
	ReasonBadSignature Reason = "bad-signature"
	// ReasonBadTile is a hash tile that does not hash to the root of the
	// checkpoint the log serves with it: the tree served is not the one
	// signed.
	ReasonBadTile Reason = "bad-tile"
	// ReasonEntryMismatch is an entry bundle whose entries do not hash to
	// the leaves of the signed tree.
	ReasonEntryMismatch Reason = "entry-mismatch"
	// ReasonUnparseableEntry is an entry of the signed tree that
	// ParseEntry refuses.
	ReasonUnparseableEntry Reason = "unparseable-entry"
	// ReasonStale is no checkpoint verified for longer than the bound, or
	// (with witnesses) a newest cosignature older than the bound.
	ReasonStale Reason = "stale"
)

// Reasons are all the reasons, in a fixed order (for metrics).
var Reasons = []Reason{ReasonFork, ReasonRewind, ReasonBadSignature, ReasonBadTile, ReasonEntryMismatch, ReasonUnparseableEntry, ReasonStale}

// Alarm is what a monitor found wrong with the log.
type Alarm struct {
	Reason Reason `json:"reason"`
	// Message says what was found, naming the sizes, indexes and hashes.
	Message string    `json:"message"`
	At      time.Time `json:"at"`
	// Checkpoint is the served signed checkpoint that raised it, as
	// evidence (empty when none was fetched).
	Checkpoint string `json:"checkpoint,omitempty"`
}

func (a *Alarm) Error() string { return string(a.Reason) + ": " + a.Message }

// MonitorConfig is what a Monitor watches and how.
type MonitorConfig struct {
	// LogKey verifies the log's checkpoints; its name is the log's origin.
	LogKey note.Verifier
	// Log reads the served log: a *TileFetcher for a log served over HTTP.
	Log torchwood.TileReader
	// StatePath is the state file: the last checkpoint verified, written
	// atomically after each verification.
	StatePath string
	// Stale is the staleness bound (0: no staleness alarm).
	Stale time.Duration
	// Witnesses verify witnesses' cosignatures (ParseWitnessKey);
	// MinWitnesses of them must have cosigned a checkpoint for it to
	// count as verified. A checkpoint cosigned by fewer is not held: the
	// check fails as a fetch does, and counts towards staleness.
	Witnesses    []note.Verifier
	MinWitnesses int
	// Start is a signed checkpoint the operator trusts, held on the first
	// run instead of the empty tree; nil: trust the first checkpoint
	// served, after checking every entry from 0.
	Start []byte
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Monitor watches a log served as tlog-tiles from another host: it holds
// the last checkpoint it verified and checks that each new one extends
// it (a consistency proof from the served hash tiles), and that every
// new entry hashes to its leaf and parses.
//
// A C2SP checkpoint carries no time, so a log that stops growing, or one
// showing this monitor a frozen view, cannot be told from a quiet CA by
// its checkpoints. Freshness comes from two places: the monitor's own
// clock (no checkpoint verified for longer than the bound: the log is
// unreachable or answers errors) and, when witnesses are configured, their
// timestamped cosignatures (C2SP tlog-cosignature): the newest of them
// older than the bound means no witness has seen this checkpoint
// recently, whatever the log says.
type Monitor struct {
	c       MonitorConfig
	st      monitorState
	held    *Checkpoint // nil: the empty tree
	started time.Time
}

// Result is what one check found.
type Result struct {
	// Checkpoint is the checkpoint held after the check (size 0 with no
	// origin when none is held yet).
	Checkpoint Checkpoint
	// OldSize is the size held before the check.
	OldSize int64
	// Alarm is set when the check raised one.
	Alarm *Alarm
	// Verified and Grew are when a checkpoint last verified and when the
	// tree last grew (zero: never, as far as the state file knows).
	Verified, Grew time.Time
	// Cosigned is the time of the newest witness cosignature (zero
	// without witnesses).
	Cosigned time.Time
}

// NewMonitor is the monitor c describes, with the state its state file
// holds. The held checkpoint must verify with the log's key.
func NewMonitor(c MonitorConfig) (*Monitor, error) {
	if c.LogKey == nil || c.Log == nil || c.StatePath == "" {
		return nil, errors.New("monitor: a log key, a log and a state file are needed")
	}
	if c.MinWitnesses < 0 || c.MinWitnesses > len(c.Witnesses) || (len(c.Witnesses) > 0 && c.MinWitnesses == 0) {
		return nil, fmt.Errorf("monitor: %d of %d witnesses required, want 1 to %d", c.MinWitnesses, len(c.Witnesses), len(c.Witnesses))
	}
	seen := map[string]bool{}
	for _, w := range c.Witnesses {
		id := fmt.Sprintf("%s+%08x", w.Name(), w.KeyHash())
		if seen[id] {
			return nil, fmt.Errorf("monitor: the witness key %s is given twice", id)
		}
		seen[id] = true
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	m := &Monitor{c: c, started: c.Now()}
	st, found, err := readMonitorState(c.StatePath)
	if err != nil {
		return nil, err
	}
	m.st = st
	held := []byte(st.Checkpoint)
	if !found || st.Checkpoint == "" {
		held = c.Start
		m.st.Checkpoint = string(c.Start)
	}
	if len(held) > 0 {
		cp, err := OpenCheckpoint(held, c.LogKey)
		if err != nil {
			return nil, fmt.Errorf("monitor: the checkpoint held (%s) does not verify with the log key: %v", heldSource(found), err)
		}
		m.held = &cp
	}
	return m, nil
}

func heldSource(found bool) string {
	if found {
		return "the state file's"
	}
	return "the starting checkpoint"
}

// ClearAlarm forgets a sticky alarm (after an operator looked into it);
// the checkpoint held stays the last good one.
func (m *Monitor) ClearAlarm() error {
	m.st.Alarm = nil
	return writeMonitorState(m.c.StatePath, m.st)
}

// Check fetches the served checkpoint and verifies it against the one
// held, then holds it. An alarm is in the Result; the error is a
// transient failure (a *FetchError: the log unreachable, a tile missing)
// or a state file that cannot be written. A transient failure when no
// checkpoint verified for longer than the staleness bound is a stale
// alarm instead, whose message names the failure. A checkpoint that
// raised an alarm is never held: the last good one stays.
func (m *Monitor) Check(ctx context.Context) (Result, error) {
	now := m.c.Now()
	if m.st.Alarm != nil {
		return m.result(m.heldSize(), m.st.Alarm, time.Time{}), nil
	}
	old := m.heldSize()
	v, alarm, err := m.verify(ctx, now)
	if alarm != nil {
		alarm.At = now
		if alarm.Reason != ReasonStale {
			m.st.Alarm = alarm
			if werr := writeMonitorState(m.c.StatePath, m.st); werr != nil {
				return m.result(old, alarm, v.cosigned), werr
			}
		}
		return m.result(old, alarm, v.cosigned), nil
	}
	if err != nil {
		if stale := m.staleAlarm(now, err); stale != nil {
			return m.result(old, stale, v.cosigned), nil
		}
		return m.result(old, nil, v.cosigned), err
	}
	m.held = &v.cp
	m.st.Checkpoint = string(v.msg)
	m.st.Verified = now
	if v.cp.Size > old {
		m.st.Grew = now
	}
	if err := writeMonitorState(m.c.StatePath, m.st); err != nil {
		return m.result(old, nil, v.cosigned), err
	}
	return m.result(old, nil, v.cosigned), nil
}

func (m *Monitor) heldSize() int64 {
	if m.held == nil {
		return 0
	}
	return m.held.Size
}

func (m *Monitor) result(old int64, a *Alarm, cosigned time.Time) Result {
	r := Result{OldSize: old, Alarm: a, Verified: m.st.Verified, Grew: m.st.Grew, Cosigned: cosigned}
	if m.held != nil {
		r.Checkpoint = *m.held
	}
	return r
}

// staleAlarm is the alarm of a check that failed with err at now, when
// no checkpoint verified for longer than the bound; nil otherwise.
func (m *Monitor) staleAlarm(now time.Time, err error) *Alarm {
	since, what := m.st.Verified, "last verified a checkpoint"
	if since.IsZero() {
		since, what = m.started, "started"
	}
	if m.c.Stale <= 0 || now.Sub(since) <= m.c.Stale {
		return nil
	}
	return &Alarm{Reason: ReasonStale, At: now, Message: fmt.Sprintf(
		"no checkpoint of the log verified for %s (the monitor %s at %s), more than the bound %s; the last check failed: %v",
		now.Sub(since).Round(time.Second), what, since.UTC().Format(time.RFC3339), m.c.Stale, err)}
}

// verified is a served checkpoint that verified.
type verified struct {
	msg      []byte
	cp       Checkpoint
	cosigned time.Time
}

// verify fetches the checkpoint and checks it: its signature, its tree
// against the one held, its new entries, then its witnesses.
func (m *Monitor) verify(ctx context.Context, now time.Time) (verified, *Alarm, error) {
	var v verified
	msg, err := m.c.Log.ReadEndpoint(ctx, CheckpointPath)
	if err != nil {
		return v, nil, err
	}
	v.msg = msg
	alarm := func(r Reason, format string, args ...any) *Alarm {
		return &Alarm{Reason: r, Message: fmt.Sprintf(format, args...), Checkpoint: string(msg)}
	}
	cp, err := OpenCheckpoint(msg, m.c.LogKey)
	if err != nil {
		return v, alarm(ReasonBadSignature, "the served checkpoint does not verify with the log key %s: %v", m.c.LogKey.Name(), err), nil
	}
	v.cp = cp
	if a, err := m.checkTree(ctx, cp); a != nil || err != nil {
		if a != nil {
			a.Checkpoint = string(msg)
		}
		return v, a, err
	}
	if len(m.c.Witnesses) == 0 {
		return v, nil, nil
	}
	count, newest, err := CountCosignatures(msg, m.c.LogKey, m.c.Witnesses)
	if errors.Is(err, ErrBadCosignature) {
		return v, alarm(ReasonBadSignature, "the served checkpoint of size %d: %v", cp.Size, err), nil
	}
	if err != nil {
		return v, nil, err
	}
	newest = newest.UTC()
	v.cosigned = newest
	if count < m.c.MinWitnesses {
		return v, nil, fmt.Errorf("the checkpoint of size %d carries good cosignatures of %d of the witnesses, %d required", cp.Size, count, m.c.MinWitnesses)
	}
	if m.c.Stale > 0 && now.Sub(newest) > m.c.Stale {
		return v, alarm(ReasonStale, "the newest witness cosignature of the checkpoint of size %d is from %s, %s ago, more than the bound %s",
			cp.Size, newest.Format(time.RFC3339), now.Sub(newest).Round(time.Second), m.c.Stale), nil
	}
	return v, nil, nil
}
