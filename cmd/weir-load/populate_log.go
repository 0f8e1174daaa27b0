// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/storage/transfer"
)

// populateLogOrigin is the origin of the log -populate -log fills: its
// checkpoint's first line and the name of its key. weir serve on the
// data directory keeps the origin of the log's latest checkpoint when
// transparency.origin is not set; a config that sets it must set this.
const populateLogOrigin = "weir-load.populate.test/log"

// popLog is the verifiable log -populate -log fills: every stored hash of
// its tree so far, in memory (2 × 32 bytes an entry: 64 MB at a million),
// and the log key that signs its checkpoint.
type popLog struct {
	signer note.Signer
	hashes []tlog.Hash
	size   int64
}

// openPopLog opens the log key of the data directory dir where weir serve
// looks for it (transparency.key-file's default), generating it as weir
// serve does at first start when it is missing, and writes its verifier
// key next to it. The hashes of a tree of n entries are allocated at once:
// a slice grown by appending would hold up to twice as much, and the
// garbage of its growth more.
func openPopLog(dir string, n int) (*popLog, error) {
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	path := server.LogKeyFile(cfg)
	pemBytes, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		pemBytes, err = generatePopLogKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("the log key %s: %w", path, err)
	}
	key, err := ca.ParseKeyPEM(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("the log key %s: %w", path, err)
	}
	signer, vkey, err := transparency.NewNoteSigner(populateLogOrigin, key)
	if err != nil {
		return nil, fmt.Errorf("the log key %s: %w", path, err)
	}
	if err := os.WriteFile(server.LogVerifierKeyFile(cfg), []byte(vkey+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("writing the log's verifier key: %w", err)
	}
	return &popLog{signer: signer, hashes: make([]tlog.Hash, 0, tlog.StoredHashCount(int64(n)))}, nil
}

// generatePopLogKey writes a new Ed25519 log key to path (PKCS#8 PEM,
// mode 0600) and returns it.
func generatePopLogKey(path string) ([]byte, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	pemBytes, err := ca.EncodeKeyPEM(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		return nil, err
	}
	return pemBytes, nil
}

// ReadHashes implements tlog.HashReader over the hashes computed so far.
func (l *popLog) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(l.hashes)) {
			return nil, fmt.Errorf("stored hash %d is not computed yet (%d are)", x, len(l.hashes))
		}
		out[i] = l.hashes[x]
	}
	return out, nil
}

// write integrates entries, the next leaves in order, and writes them
// with the stored hashes they add.
func (l *popLog) write(ctx context.Context, sink populateSink, entries []transfer.LogEntry) error {
	first := len(l.hashes)
	for _, e := range entries {
		if e.LogIndex == nil || *e.LogIndex != l.size {
			return fmt.Errorf("populate: log entry %d is not at leaf %d", e.ID, l.size)
		}
		hs, err := tlog.StoredHashes(l.size, e.Entry, l)
		if err != nil {
			return fmt.Errorf("populate: hashing log entry %d: %w", l.size, err)
		}
		l.hashes = append(l.hashes, hs...)
		l.size++
	}
	if err := sink.LogEntries(ctx, entries); err != nil {
		return err
	}
	rows := make([]transfer.LogHash, 0, len(l.hashes)-first)
	for x := first; x < len(l.hashes); x++ {
		rows = append(rows, transfer.LogHash{Index: int64(x), Hash: l.hashes[x][:]})
	}
	return sink.LogHashes(ctx, rows)
}

// checkpoint writes the signed checkpoint of the log's size.
func (l *popLog) checkpoint(ctx context.Context, sink populateSink) error {
	root, err := tlog.TreeHash(l.size, l)
	if err != nil {
		return fmt.Errorf("populate: the log's root at size %d: %w", l.size, err)
	}
	cp, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: l.signer.Name(), Size: l.size, Hash: root}, l.signer)
	if err != nil {
		return fmt.Errorf("populate: signing the checkpoint of size %d: %w", l.size, err)
	}
	return sink.LogCheckpoints(ctx, []transfer.LogCheckpoint{{Size: l.size, Checkpoint: cp}})
}

// logEntry is the log's issuance entry of certificate i (leaf i), as
// weir's finalize writes it (acme's issuedEntry) for an account's order
// whose names were each validated by http-01.
func logEntry(i int, account int64, order, serial string, der []byte, names []string, issued time.Time) (transfer.LogEntry, error) {
	vs := make([]transparency.Validation, len(names))
	for k, n := range names {
		vs[k] = transparency.Validation{Name: n, Method: string(acme.ChallengeHTTP01)}
	}
	id := strconv.FormatInt(account, 10)
	b, err := transparency.EncodeEntry(transparency.Entry{V: transparency.EntryVersion, Kind: transparency.KindIssued,
		Time:   time.Unix(0, issued.UnixNano()).UTC(),
		Actor:  transparency.Actor{Kind: "account", ID: id, Address: "127.0.0.1"},
		Issued: &transparency.Issued{Certificate: der, Issuer: acme.IssuerOrDefault(""), Account: id, Order: order, Validations: vs}})
	if err != nil {
		return transfer.LogEntry{}, fmt.Errorf("the log entry of certificate %d: %w", i, err)
	}
	index := int64(i)
	return transfer.LogEntry{ID: index + 1, Entry: b, Serial: &serial, LogIndex: &index}, nil
}
