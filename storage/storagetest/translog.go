// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
)

// testLog checks transparency.Store: entries are written with what they record
// and only then (a refused finalization or revocation writes none), wait
// pending in the order written, and are integrated by batches that are
// compare-and-sets on the size: a batch at a stale size, or of an entry
// already integrated, changes nothing.
func testLog(t *testing.T, f *fixture) {
	s := f.s
	head := func(wantSize int64, wantCP string) {
		t.Helper()
		size, cp, err := s.LogHead(f.ctx)
		if err != nil || size != wantSize || string(cp) != wantCP {
			t.Fatalf("LogHead = %d, %q, %v; want %d, %q", size, cp, err, wantSize, wantCP)
		}
	}
	pending := func(limit int, want ...string) []transparency.PendingEntry {
		t.Helper()
		ps, err := s.PendingLogEntries(f.ctx, limit)
		if err != nil {
			t.Fatalf("PendingLogEntries: %v", err)
		}
		var got []string
		for i, p := range ps {
			got = append(got, string(p.Entry))
			if i > 0 && p.ID <= ps[i-1].ID {
				t.Errorf("PendingLogEntries: ID %d after %d", p.ID, ps[i-1].ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("PendingLogEntries(%d) = %q, want %q", limit, got, want)
		}
		return ps
	}
	entries := func(from int64, n int, want ...string) {
		t.Helper()
		es, err := s.LogEntries(f.ctx, from, n)
		if err != nil {
			t.Fatalf("LogEntries(%d, %d): %v", from, n, err)
		}
		var got []string
		for _, e := range es {
			got = append(got, string(e))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("LogEntries(%d, %d) = %q, want %q", from, n, got, want)
		}
	}
	head(0, "")
	pending(10)
	entries(0, 10)

	acct := f.account(t)
	o := f.processingOrder(t, acct.ID, "logged.example.com")
	c := f.cert(o, fmt.Sprintf("%040x", 0xe0), at(90*24*time.Hour))
	c.LogEntry = []byte("e0 issued")
	if err := s.FinalizeOrder(f.ctx, c); err != nil {
		t.Fatalf("FinalizeOrder: %v", err)
	}
	if got, err := s.GetCertificate(f.ctx, c.Serial); err != nil || got.LogEntry != nil {
		t.Fatalf("GetCertificate: LogEntry %q, %v; the entry is not part of the certificate", got.LogEntry, err)
	}
	again := f.cert(o, fmt.Sprintf("%040x", 0xe1), at(90*24*time.Hour))
	again.LogEntry = []byte("refused issuance")
	wantErr(t, "FinalizeOrder(valid order)", s.FinalizeOrder(f.ctx, again), acme.ErrConflict)
	if err := s.AppendLogEntry(f.ctx, []byte("e1 admin")); err != nil {
		t.Fatalf("AppendLogEntry: %v", err)
	}
	if err := s.RevokeCertificate(f.ctx, c.Serial, 1, at(time.Hour), []byte("e2 revoked")); err != nil {
		t.Fatalf("RevokeCertificate: %v", err)
	}
	wantErr(t, "RevokeCertificate(again)", s.RevokeCertificate(f.ctx, c.Serial, 1, at(2*time.Hour), []byte("refused revocation")), acme.ErrConflict)
	wantErr(t, "RevokeCertificate(unknown)", s.RevokeCertificate(f.ctx, "deadbeef", 1, at(2*time.Hour), []byte("refused revocation")), acme.ErrNotFound)
	head(0, "")
	pending(2, "e0 issued", "e1 admin")
	ps := pending(10, "e0 issued", "e1 admin", "e2 revoked")
	_, err := s.LogIndexOf(f.ctx, c.Serial)
	wantErr(t, "LogIndexOf(pending)", err, acme.ErrNotFound)

	hash := func(i int64) transparency.StoredHash {
		return transparency.StoredHash{Index: i, Hash: sha256.Sum256(fmt.Appendf(nil, "h%d", i))}
	}
	first := transparency.Batch{OldSize: 0, IDs: []int64{ps[0].ID, ps[1].ID}, Hashes: []transparency.StoredHash{hash(0), hash(1), hash(2)}, Checkpoint: []byte("cp2")}
	if err := s.IntegrateLog(f.ctx, first); err != nil {
		t.Fatalf("IntegrateLog: %v", err)
	}
	head(2, "cp2")
	pending(10, "e2 revoked")
	entries(0, 10, "e0 issued", "e1 admin")
	entries(1, 1, "e1 admin")
	entries(2, 10)
	if i, err := s.LogIndexOf(f.ctx, c.Serial); err != nil || i != 0 {
		t.Fatalf("LogIndexOf = %d, %v; want 0", i, err)
	}
	hs, err := s.LogHashes(f.ctx, []int64{2, 0})
	if err != nil || len(hs) != 2 || hs[0] != hash(2).Hash || hs[1] != hash(0).Hash {
		t.Fatalf("LogHashes(2, 0) = %x, %v", hs, err)
	}
	_, err = s.LogHashes(f.ctx, []int64{0, 3})
	wantErr(t, "LogHashes(not stored)", err, acme.ErrNotFound)

	// A stale size, or an entry already integrated: nothing changes.
	stale := transparency.Batch{OldSize: 0, IDs: []int64{ps[2].ID}, Hashes: []transparency.StoredHash{hash(3)}, Checkpoint: []byte("stale")}
	wantErr(t, "IntegrateLog(stale size)", s.IntegrateLog(f.ctx, stale), acme.ErrConflict)
	twice := transparency.Batch{OldSize: 2, IDs: []int64{ps[2].ID, ps[0].ID}, Hashes: []transparency.StoredHash{hash(3)}, Checkpoint: []byte("twice")}
	wantErr(t, "IntegrateLog(integrated entry)", s.IntegrateLog(f.ctx, twice), acme.ErrConflict)
	head(2, "cp2")
	pending(10, "e2 revoked")
	_, err = s.LogHashes(f.ctx, []int64{3})
	wantErr(t, "LogHashes(of a refused batch)", err, acme.ErrNotFound)

	last := transparency.Batch{OldSize: 2, IDs: []int64{ps[2].ID}, Hashes: []transparency.StoredHash{hash(3), hash(4)}, Checkpoint: []byte("cp3")}
	if err := s.IntegrateLog(f.ctx, last); err != nil {
		t.Fatalf("IntegrateLog: %v", err)
	}
	head(3, "cp3")
	pending(10)
	// Many indexes, repeated, in any order (a store may read them in
	// several queries): each answered in its place.
	var many []int64
	for i := range 1200 {
		many = append(many, int64(4-i%5))
	}
	if hs, err := s.LogHashes(f.ctx, many); err != nil || len(hs) != len(many) {
		t.Fatalf("LogHashes(%d indexes) = %d hashes, %v", len(many), len(hs), err)
	} else {
		for i, h := range hs {
			if h != hash(many[i]).Hash {
				t.Fatalf("LogHashes(%d indexes)[%d] is not hash %d", len(many), i, many[i])
			}
		}
	}
	entries(0, 10, "e0 issued", "e1 admin", "e2 revoked")
	if cp, err := s.LogCheckpoint(f.ctx, 2); err != nil || string(cp) != "cp2" {
		t.Fatalf("LogCheckpoint(2) = %q, %v", cp, err)
	}
	_, err = s.LogCheckpoint(f.ctx, 1)
	wantErr(t, "LogCheckpoint(never signed)", err, acme.ErrNotFound)
}
