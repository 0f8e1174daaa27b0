// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/web/admin"
)

// LogWitness is a witness the log asks to cosign its checkpoints (C2SP
// tlog-witness): weir log witness, or any witness of the field.
type LogWitness struct {
	// URL is the witness's base URL: weir POSTs URL/add-checkpoint.
	URL string `yaml:"url"`
	// Key is its cosignature/v1 verifier key ("name+hash+base64", as
	// weir log witness-keygen prints it).
	Key string `yaml:"key"`
}

// The witnesses' defaults.
const (
	// defaultWitnessInterval is how often a checkpoint that did not grow
	// is cosigned again: the witnesses' timestamps tell monitors that the
	// log is alive (a checkpoint itself carries no time).
	defaultWitnessInterval = time.Minute
	// witnessTimeout bounds one exchange with a witness.
	witnessTimeout = 10 * time.Second
)

// validateWitnesses checks the witnesses of the block, each error under
// its key.
func (t TransparencyConfig) validateWitnesses() []error {
	var errs []error
	seen := map[string]bool{}
	for i, w := range t.Witnesses {
		key := fmt.Sprintf("transparency.witnesses[%d]", i)
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s.url: %q is not an http:// or https:// URL", key, w.URL))
		}
		if _, err := transparency.ParseWitnessKey(w.Key); err != nil {
			errs = append(errs, fmt.Errorf("%s.key: %v", key, err))
		} else if seen[w.Key] {
			errs = append(errs, fmt.Errorf("%s.key: the witness is listed twice", key))
		}
		seen[w.Key] = true
	}
	if n := t.WitnessesRequired; n < 0 || n > len(t.Witnesses) {
		errs = append(errs, fmt.Errorf("transparency.witnesses-required: %d is not between 0 and the %d witnesses listed", n, len(t.Witnesses)))
	}
	if t.WitnessInterval < t.Interval {
		errs = append(errs, fmt.Errorf("transparency.witness-interval: %s is shorter than transparency.interval %s", t.WitnessInterval, t.Interval))
	}
	return errs
}

// cosigner asks the witnesses to cosign the log's latest checkpoint, on
// the replica that sequences, and stores it with their cosignatures:
// served once WitnessesRequired of them cosigned it.
type cosigner struct {
	witnesses []*witnessPeer
	required  int
	interval  time.Duration
	store     transparency.Store
	logKey    note.Verifier
	hc        *http.Client
	log       *slog.Logger
	metrics   func() *admin.LogMetrics
	now       func() time.Time

	lastSize int64
	lastAt   time.Time
}

// witnessPeer is one witness and the size it was last seen to hold.
type witnessPeer struct {
	url  string
	key  note.Verifier
	held int64
}

// newCosigner is the cosigner of c's witnesses; nil when there is none.
func newCosigner(c TransparencyConfig, st transparency.Store, logKey note.Verifier, log *slog.Logger, metrics func() *admin.LogMetrics) (*cosigner, error) {
	if len(c.Witnesses) == 0 {
		return nil, nil
	}
	cs := &cosigner{required: c.WitnessesRequired, interval: c.WitnessInterval, store: st, logKey: logKey,
		hc: &http.Client{Timeout: witnessTimeout}, log: log, metrics: metrics, now: time.Now, lastSize: -1}
	for _, w := range c.Witnesses {
		v, err := transparency.ParseWitnessKey(w.Key)
		if err != nil {
			return nil, err
		}
		cs.witnesses = append(cs.witnesses, &witnessPeer{url: w.URL, key: v})
	}
	return cs, nil
}

// run sends the latest checkpoint to every witness when the tree grew,
// or when interval passed since the last round, and stores what they
// cosigned. A witness that fails or refuses is logged and counted; the
// others' cosignatures are kept.
func (c *cosigner) run(ctx context.Context) error {
	size, head, err := c.store.LogHead(ctx)
	if err != nil || head == nil {
		return err
	}
	now := c.now()
	if size == c.lastSize && now.Sub(c.lastAt) < c.interval {
		return nil
	}
	reader := transparency.StoreHashReader(ctx, c.store)
	prove := func(old int64) ([]tlog.Hash, error) {
		if old == 0 {
			return nil, nil
		}
		p, err := tlog.ProveTree(size, old, reader)
		return p, err
	}
	var cosigs [][]byte
	for _, w := range c.witnesses {
		cosig, held, err := transparency.RequestCosignature(ctx, c.hc, w.url, w.key, c.logKey, head, w.held, prove)
		if err != nil {
			if held > 0 {
				w.held = held
			}
			if m := c.metrics(); m != nil {
				m.WitnessFailure(w.key.Name())
			}
			c.log.Warn("verifiable log: a witness did not cosign the checkpoint", "witness", w.key.Name(), "url", w.url, "size", size, "err", err)
			continue
		}
		w.held = size
		cosigs = append(cosigs, cosig)
	}
	signed, err := transparency.AppendCosignatures(head, cosigs...)
	if err != nil {
		return err
	}
	keys := make([]note.Verifier, len(c.witnesses))
	for i, w := range c.witnesses {
		keys[i] = w.key
	}
	n, _, err := transparency.CountCosignatures(signed, c.logKey, keys)
	if err != nil {
		return err
	}
	if err := c.store.CosignLogCheckpoint(ctx, size, signed, n >= c.required); err != nil {
		return err
	}
	c.lastSize, c.lastAt = size, now
	return nil
}
