// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
)

// TransparencyConfig is the verifiable log (acme/transparency): every
// issuance and revocation, written in the transaction that records it,
// and every administrator's action and configuration reload, integrated
// into a Merkle tree whose signed checkpoints are served, with the tree's
// tiles, on the public listeners under /log/. It changes only with a
// restart: turning it off live would let certificates be issued without
// their entries.
type TransparencyConfig struct {
	// Enabled turns the log on.
	Enabled bool `yaml:"enabled"`
	// Origin names the log in its checkpoints and is the name of its
	// key; "" is the origin of the log's latest checkpoint, or for a new
	// log the host of server.external-url (or server.listen) followed
	// by "/log".
	Origin string `yaml:"origin"`
	// KeyFile is the log's Ed25519 key, relative to data-dir, for the
	// file signers; generated (mode 0600) at first start when missing
	// and the log is still empty.
	KeyFile string `yaml:"key-file"`
	// Signer says how the log key is held (file, encrypted-file or
	// pkcs11: the CA keys' seam). The log key is never a CA key.
	Signer ca.SignerConfig `yaml:"signer"`
	// Interval is how often the sequencer integrates the waiting entries
	// and publishes a checkpoint of the new size.
	Interval time.Duration `yaml:"interval"`
	// MaxLag is how long an entry may wait to be integrated before
	// /readyz warns and the log is reported as behind.
	MaxLag time.Duration `yaml:"max-lag"`
	// Witnesses are asked to cosign each new checkpoint
	// (transparencywitness.go).
	Witnesses []LogWitness `yaml:"witnesses"`
	// WitnessesRequired is how many of them must have cosigned a
	// checkpoint before it is served; 0 serves each checkpoint at once.
	WitnessesRequired int `yaml:"witnesses-required"`
	// WitnessInterval is how often a checkpoint that did not grow is sent
	// to the witnesses again, for fresh timestamps.
	WitnessInterval time.Duration `yaml:"witness-interval"`
}

// The log's defaults.
const (
	defaultLogKeyFile  = "transparency/log-key.pem"
	defaultLogInterval = time.Second
	defaultLogMaxLag   = 30 * time.Second
)

func defaultTransparency() TransparencyConfig {
	return TransparencyConfig{KeyFile: defaultLogKeyFile, Interval: defaultLogInterval, MaxLag: defaultLogMaxLag,
		Signer: ca.SignerConfig{Type: ca.SignerFile}, WitnessInterval: defaultWitnessInterval}
}

// validate checks the block, each error under its key.
func (c Config) validateTransparency() []error {
	t := c.Transparency
	var errs []error
	if t.Interval <= 0 || t.Interval > time.Minute {
		errs = append(errs, fmt.Errorf("transparency.interval: %s is not between 0 and 1m (a checkpoint at least every few seconds)", t.Interval))
	}
	if t.MaxLag < t.Interval {
		errs = append(errs, fmt.Errorf("transparency.max-lag: %s is shorter than transparency.interval %s", t.MaxLag, t.Interval))
	}
	if err := t.Signer.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("transparency.signer.%w", err))
	}
	if t.Signer.NeedsKeyFile() && t.KeyFile == "" {
		errs = append(errs, errors.New("transparency.key-file: must not be empty with a file signer"))
	}
	errs = append(errs, t.validateWitnesses()...)
	if t.Enabled && !validNoteName(c.logOrigin()) {
		errs = append(errs, fmt.Errorf("transparency.origin: %q cannot name the log (no spaces, no '+'); set transparency.origin", c.logOrigin()))
	}
	return errs
}

// validNoteName reports whether name can name a signed note's key (C2SP
// signed-note: not empty, no space, no '+').
func validNoteName(name string) bool {
	vkey, err := note.NewEd25519VerifierKey(name, make(ed25519.PublicKey, ed25519.PublicKeySize))
	if err != nil {
		return false
	}
	_, err = note.NewVerifier(vkey)
	return err == nil
}

// logOrigin is the log's origin: transparency.origin, or the host of the
// external URL followed by "/log".
func (c Config) logOrigin() string {
	if c.Transparency.Origin != "" {
		return c.Transparency.Origin
	}
	u, err := url.Parse(externalURL(c))
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Host + "/log"
}

// LogKeyFile is the path of the log's key file.
func LogKeyFile(cfg Config) string {
	if filepath.IsAbs(cfg.Transparency.KeyFile) {
		return cfg.Transparency.KeyFile
	}
	return dataPath(cfg.DataDir, cfg.Transparency.KeyFile)
}

// LogVerifierKeyFile is where weir writes the log's verifier key (the
// note key "origin+hash+base64" that monitors, witnesses and relying
// parties check checkpoints with): next to the key, public.
func LogVerifierKeyFile(cfg Config) string {
	return dataPath(cfg.DataDir, logVerifierKeyName)
}

// logVerifierKeyName is the verifier key's file in the data directory.
const logVerifierKeyName = "transparency/log-key.vkey"

// logKey is the log's key, opened.
type logKey struct {
	signer   note.Signer
	verifier note.Verifier
	vkey     string
	closer   ca.Signer
}

// openLogKey opens the log's key through the signer seam, generating a
// file key at first start when the log is still empty. A key that does
// not verify the log's latest checkpoint is refused: a replica with
// another key would sign checkpoints no monitor accepts.
func openLogKey(ctx context.Context, cfg Config, st transparency.Store) (*logKey, error) {
	t := cfg.Transparency
	size, head, err := st.LogHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("transparency: reading the log's head: %w", err)
	}
	path := LogKeyFile(cfg)
	if t.Signer.SignerType() == ca.SignerFile {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if size > 0 {
				return nil, fmt.Errorf("transparency.key-file: %s is missing, and the log already holds %d entries signed with its key: copy the log key from the replica or backup that has it", path, size)
			}
			if err := generateLogKey(path); err != nil {
				return nil, fmt.Errorf("transparency.key-file: generating %s: %w", path, err)
			}
		}
	}
	s, err := ca.OpenSigner("transparency.signer", t.Signer, path)
	if err != nil {
		return nil, err
	}
	origin := cfg.logOrigin()
	if t.Origin == "" && head != nil {
		// The log keeps the origin it was given at its first start, even
		// once the external URL it came from changes.
		origin, _, _ = strings.Cut(string(head), "\n")
	}
	signer, vkey, err := transparency.NewNoteSigner(origin, s)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("transparency: %w", err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("transparency: %w", err)
	}
	if head != nil {
		if _, err := transparency.OpenCheckpoint(head, v); err != nil {
			s.Close()
			return nil, fmt.Errorf("transparency: the log's latest checkpoint (size %d) does not verify with this log key and origin %q (%v): "+
				"it was signed by another key or under another origin; use the log's own key and transparency.origin", size, origin, err)
		}
	}
	if err := writeFileAtomic(LogVerifierKeyFile(cfg), []byte(vkey+"\n"), 0o644); err != nil {
		s.Close()
		return nil, fmt.Errorf("transparency: writing the verifier key: %w", err)
	}
	return &logKey{signer: signer, verifier: v, vkey: vkey, closer: s}, nil
}

// generateLogKey writes a new Ed25519 key to path (PKCS#8 PEM, 0600).
func generateLogKey(path string) error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	pemBytes, err := ca.EncodeKeyPEM(key)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, pemBytes, 0o600)
}

// close releases the key (a PKCS#11 session).
func (k *logKey) close() error {
	if k == nil || k.closer == nil {
		return nil
	}
	return k.closer.Close()
}

// String is the verifier key, for the banner and the admin API.
func (k *logKey) String() string { return strings.TrimSpace(k.vkey) }
