// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
)

// logConfig is a configuration with the log on in a new data directory.
func logConfig(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Transparency.Enabled = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// openLog opens cfg's store and its log, both closed at the test's end.
func openLog(t *testing.T, cfg Config) (Store, *verifiableLog) {
	t.Helper()
	st, err := openStore(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l, err := newVerifiableLog(t.Context(), cfg, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.close() })
	return st, l
}

// TestTransparencyConfigErrors: each bad value of the block is refused
// under its key.
func TestTransparencyConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*TransparencyConfig)
	}{
		{"interval zero", "transparency.interval", func(c *TransparencyConfig) { c.Interval = 0 }},
		{"interval long", "transparency.interval", func(c *TransparencyConfig) { c.Interval = 2 * time.Minute }},
		{"max-lag short", "transparency.max-lag", func(c *TransparencyConfig) { c.MaxLag = c.Interval / 2 }},
		{"origin with a space", "transparency.origin", func(c *TransparencyConfig) { c.Origin = "my log" }},
		{"origin with a plus", "transparency.origin", func(c *TransparencyConfig) { c.Origin = "a+b" }},
		{"no key file", "transparency.key-file", func(c *TransparencyConfig) { c.KeyFile = "" }},
		{"bad signer", "transparency.signer.type", func(c *TransparencyConfig) { c.Signer.Type = "kms" }},
		{"more witnesses required than listed", "transparency.witnesses-required", func(c *TransparencyConfig) { c.WitnessesRequired = 1 }},
		{"a witness URL", "transparency.witnesses[0].url", func(c *TransparencyConfig) { c.Witnesses = []LogWitness{{URL: "ftp://w", Key: "x"}} }},
		{"a witness key", "transparency.witnesses[0].key", func(c *TransparencyConfig) { c.Witnesses = []LogWitness{{URL: "https://w", Key: "w+00000000+AA=="}} }},
		{"a log key as a witness key", "not a cosignature/v1 key", func(c *TransparencyConfig) {
			c.Witnesses = []LogWitness{{URL: "https://w", Key: "ca.weir.test/log+b5067f3a+AYfEa5JIyHdXWVaAx7ejlWixomv2jmeCsRTQgrXHYNNn"}}
		}},
		{"witness interval short", "transparency.witness-interval", func(c *TransparencyConfig) { c.WitnessInterval = c.Interval / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Transparency.Enabled = true
			tc.edit(&cfg.Transparency)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
	if got := logConfig(t).logOrigin(); got != "localhost:14000/log" {
		t.Errorf("the default origin is %q, want the listen address's host/log", got)
	}
}

// TestLogKey: the first start generates the key (0600) and writes its
// verifier key; a restart opens the same key; a missing key file once the
// log holds entries, and another key, are refused with what to do.
func TestLogKey(t *testing.T) {
	cfg := logConfig(t)
	ctx := t.Context()
	st, l := openLog(t, cfg)
	fi, err := os.Stat(LogKeyFile(cfg))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the generated key file: %v, %v; want mode 0600", fi, err)
	}
	vkey, err := os.ReadFile(LogVerifierKeyFile(cfg))
	if err != nil || strings.TrimSpace(string(vkey)) != l.key.String() {
		t.Fatalf("the verifier key file holds %q (%v), want %q", vkey, err, l.key.String())
	}
	if err := st.AppendLogEntry(ctx, []byte(`{"v":1,"time":"2026-12-07T05:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	if _, n, err := l.seq.Integrate(ctx); err != nil || n != 1 {
		t.Fatalf("Integrate = %d, %v", n, err)
	}
	l.close()
	again, err := newVerifiableLog(ctx, cfg, st, slog.New(slog.DiscardHandler))
	if err != nil || again.key.String() != l.key.String() {
		t.Fatalf("the restart's key: %v, %v; want the same key", again, err)
	}
	again.close()

	if err := os.Rename(LogKeyFile(cfg), LogKeyFile(cfg)+".moved"); err != nil {
		t.Fatal(err)
	}
	if _, err := newVerifiableLog(ctx, cfg, st, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "copy the log key") {
		t.Errorf("a missing key with a non-empty log: %v, want a refusal saying to copy the key", err)
	}
	_, other, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := ca.EncodeKeyPEM(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(LogKeyFile(cfg), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newVerifiableLog(ctx, cfg, st, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "does not verify with this log key") {
		t.Errorf("another key: %v, want a refusal", err)
	}
}

// TestLogBehind: an entry that waits longer than max-lag is reported by
// the readiness warning and the state the metrics read; a failing
// sequencer is logged once a minute, and counted each time.
func TestLogBehind(t *testing.T) {
	cfg := logConfig(t)
	ctx := t.Context()
	st, l := openLog(t, cfg)
	written := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return written.Add(10 * time.Second) }
	e, err := transparency.EncodeEntry(transparency.Entry{V: 1, Kind: transparency.KindEvent, Time: written,
		Actor: transparency.Actor{Kind: "system"}, Event: &transparency.Event{Type: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendLogEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if w := l.warning(ctx); w != "" {
		t.Errorf("warning 10s after the write (max-lag %s): %q, want none", cfg.Transparency.MaxLag, w)
	}
	l.now = func() time.Time { return written.Add(cfg.Transparency.MaxLag + time.Second) }
	if w := l.warning(ctx); !strings.Contains(w, "behind") || !strings.Contains(w, "31s") {
		t.Errorf("warning past max-lag: %q", w)
	}
	if s, err := l.state(ctx); err != nil || s.Size != 0 || s.Oldest != cfg.Transparency.MaxLag+time.Second {
		t.Errorf("state = %+v, %v", s, err)
	}
	boom := errors.New("token removed")
	if err := l.throttled(boom); !errors.Is(err, boom) {
		t.Errorf("the first failure: %v, want it logged", err)
	}
	if err := l.throttled(boom); err != nil {
		t.Errorf("the second failure within a minute: %v, want it not logged again", err)
	}
}
