// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
)

// indexedStore is a store whose issuance entries, written with
// AppendLogEntry, are found by serial as FinalizeOrder's are; any other
// serial is asked of the store itself.
type indexedStore struct {
	transparency.Store
	serials map[string]int64
}

func (s indexedStore) LogIndexOf(ctx context.Context, serial string) (int64, error) {
	if i, ok := s.serials[serial]; ok {
		return i, nil
	}
	return s.Store.LogIndexOf(ctx, serial)
}

// provedLog is a log of 600 entries whose issuances are found by serial,
// with the entries and the log key's verifier.
func provedLog(t *testing.T) (indexedStore, [][]byte, transparency.Checkpoint, *logKeys) {
	t.Helper()
	es := logEntries(t, 0, 600)
	st, signer, v := sequencedLog(t, es)
	is := indexedStore{Store: st, serials: map[string]int64{}}
	for i, e := range es {
		if p, err := transparency.ParseEntry(e); err == nil && p.Kind == transparency.KindIssued {
			is.serials[serialHex(t, p.Issued.Certificate)] = int64(i)
		}
	}
	return is, es, head(t, st, v, es), &logKeys{signer: signer, verifier: v}
}

// TestProveSerial: the proof of an issuance verifies offline, through its
// JSON form too, and names the certificate; a serial not logged is the
// store's not-found.
func TestProveSerial(t *testing.T) {
	st, es, c, keys := provedLog(t)
	serial := fmt.Sprintf("%x", 1300) // entry 300
	p, err := transparency.ProveSerial(t.Context(), st, serial)
	if err != nil {
		t.Fatal(err)
	}
	if p.Index != 300 || string(p.Entry) != string(es[300]) || len(p.Proof) == 0 {
		t.Fatalf("the proof of %s: index %d, entry %q, %d hashes", serial, p.Index, p.Entry, len(p.Proof))
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || len(fields) != 4 || fields["index"] == nil || fields["entry"] == nil || fields["proof"] == nil || fields["checkpoint"] == nil {
		t.Fatalf("the JSON form %s (%v)", b, err)
	}
	var back transparency.InclusionProof
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, e, err := back.Verify(keys.verifier)
	if err != nil {
		t.Fatalf("the proof, through JSON: %v", err)
	}
	if got.Size != c.Size || got.Hash != c.Hash || e.Kind != transparency.KindIssued {
		t.Fatalf("verified against %+v, entry kind %q; want %+v, issued", got, e.Kind, c)
	}
	if err := back.VerifyCertificate(keys.verifier, e.Issued.Certificate); err != nil {
		t.Fatalf("VerifyCertificate: %v", err)
	}

	_, err = transparency.ProveSerial(t.Context(), st, "ffff")
	if !errors.Is(err, acme.ErrNotFound) || !strings.Contains(err.Error(), `"ffff"`) {
		t.Fatalf("ProveSerial(not logged) = %v, want acme.ErrNotFound naming the serial", err)
	}
}

// TestProofTampered: each part of a proof changed fails its check, with
// what failed.
func TestProofTampered(t *testing.T) {
	st, es, _, keys := provedLog(t)
	good, err := transparency.ProveSerial(t.Context(), st, fmt.Sprintf("%x", 1300))
	if err != nil {
		t.Fatal(err)
	}
	other, err := transparency.ProveSerial(t.Context(), st, fmt.Sprintf("%x", 1303))
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := logKey(t, keys.verifier.Name())
	tamper := func(f func(p *transparency.InclusionProof)) transparency.InclusionProof {
		p := good
		p.Proof = append([]tlog.Hash{}, good.Proof...)
		f(&p)
		return p
	}
	for _, tc := range []struct {
		name string
		p    transparency.InclusionProof
		want string
	}{
		{"another index", tamper(func(p *transparency.InclusionProof) { p.Index = 301 }), "the entry is not leaf 301 of the checkpoint's tree of size 600"},
		{"an index beyond", tamper(func(p *transparency.InclusionProof) { p.Index = 600 }), "index 600 is outside the checkpoint's tree of size 600"},
		{"a negative index", tamper(func(p *transparency.InclusionProof) { p.Index = -1 }), "index -1 is outside"},
		{"another entry", tamper(func(p *transparency.InclusionProof) { p.Entry = es[303] }), "the entry is not leaf 300"},
		{"a proof hash", tamper(func(p *transparency.InclusionProof) { p.Proof[2][0] ^= 1 }), "the entry is not leaf 300"},
		{"a proof hash short", tamper(func(p *transparency.InclusionProof) { p.Proof = p.Proof[1:] }), "the entry is not leaf 300"},
		{"the checkpoint's signature", tamper(func(p *transparency.InclusionProof) {
			p.Checkpoint = []byte(strings.Replace(string(p.Checkpoint), "600\n", "601\n", 1))
		}), "checkpoint: invalid signature"},
		{"the checkpoint's key", tamper(func(p *transparency.InclusionProof) {
			cp, _ := transparency.ParseCheckpoint(strings.SplitN(string(p.Checkpoint), "\n\n", 2)[0] + "\n")
			p.Checkpoint, _ = transparency.SignCheckpoint(cp, foreign)
		}), "checkpoint: note has no verifiable signatures"},
	} {
		if _, _, err := tc.p.Verify(keys.verifier); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Verify = %v, want %q", tc.name, err, tc.want)
		}
		if err := tc.p.VerifyCertificate(keys.verifier, entryCert(t, es[300])); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: VerifyCertificate = %v, want %q", tc.name, err, tc.want)
		}
	}
	err = good.VerifyCertificate(keys.verifier, entryCert(t, es[303]))
	if want := fmt.Sprintf("entry 300 records the issuance of another certificate (serial %x), not this one (serial %x)", 1300, 1303); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("VerifyCertificate(another certificate) = %v, want %q", err, want)
	}
	if err := other.VerifyCertificate(keys.verifier, entryCert(t, es[303])); err != nil {
		t.Errorf("VerifyCertificate(303's certificate, 303's proof): %v", err)
	}
	revocation := tamper(func(p *transparency.InclusionProof) {})
	revocation.Index, revocation.Entry = 301, es[301]
	if revocation.Proof, err = tlog.ProveRecord(600, 301, transparency.StoreHashReader(t.Context(), st)); err != nil {
		t.Fatal(err)
	}
	if err := revocation.VerifyCertificate(keys.verifier, entryCert(t, es[300])); err == nil || !strings.Contains(err.Error(), `entry 301 is of kind "revoked", not an issuance`) {
		t.Errorf("VerifyCertificate(a revocation's proof) = %v", err)
	}
}
