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

// popLog is the verifiable log -populate -log fills: its tree, in memory
// (2 × 32 bytes an entry: 64 MB at a million), and how its checkpoint is
// signed with the log key.
type popLog struct {
	tree   *transparency.MemTree
	origin string
	sign   func(transparency.Checkpoint) ([]byte, error)
}

// openPopLog opens the log key of the data directory dir where weir serve
// looks for it (transparency.key-file's default), generating it as weir
// serve does at first start when it is missing, and writes its verifier
// key next to it. The stored hashes of a tree of n entries are allocated at
// once: a slice grown by appending would hold up to twice as much, and the
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
	sign := func(c transparency.Checkpoint) ([]byte, error) { return transparency.SignCheckpoint(c, signer) }
	return &popLog{tree: transparency.NewMemTree(int64(n)), origin: signer.Name(), sign: sign}, nil
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

// write integrates entries, the next leaves in order, and writes them
// with the stored hashes they add.
func (l *popLog) write(ctx context.Context, sink populateSink, entries []transfer.LogEntry) error {
	leaves := make([][]byte, len(entries))
	for i, e := range entries {
		if want := l.tree.Size() + int64(i); e.LogIndex == nil || *e.LogIndex != want {
			return fmt.Errorf("populate: log entry %d is not at leaf %d", e.ID, want)
		}
		leaves[i] = e.Entry
	}
	added, err := l.tree.Append(leaves)
	if err != nil {
		return fmt.Errorf("populate: hashing the log's entries: %w", err)
	}
	if err := sink.LogEntries(ctx, entries); err != nil {
		return err
	}
	rows := make([]transfer.LogHash, len(added))
	for i, h := range added {
		rows[i] = transfer.LogHash{Index: h.Index, Hash: h.Hash[:]}
	}
	return sink.LogHashes(ctx, rows)
}

// checkpoint writes the signed checkpoint of the log's size.
func (l *popLog) checkpoint(ctx context.Context, sink populateSink) error {
	size := l.tree.Size()
	root, err := l.tree.Root()
	if err != nil {
		return fmt.Errorf("populate: %w", err)
	}
	cp, err := l.sign(transparency.Checkpoint{Origin: l.origin, Size: size, Hash: root})
	if err != nil {
		return fmt.Errorf("populate: signing the checkpoint of size %d: %w", size, err)
	}
	return sink.LogCheckpoints(ctx, []transfer.LogCheckpoint{{Size: size, Checkpoint: cp}})
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
