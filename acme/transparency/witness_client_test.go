// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestRequestCosignature: the log's side, from a size it does not know
// to be the witness's (0 after a restart), is told the size held and
// asks again with the proof from it; the cosignature it returns is the
// witness key's alone and verifies. A wrong witness key, or a witness
// that holds more than the checkpoint, is an error.
func TestRequestCosignature(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 30)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	key := witnessKey(t, tw)
	var proved []int64
	prove := func(old int64) ([]tlog.Hash, error) {
		proved = append(proved, old)
		return l.proof(t, 20, old), nil
	}
	ctx := t.Context()
	if _, _, err := tw.add(t, l, 0, nil, l.checkpoint(t, 10)); err != nil {
		t.Fatal(err)
	}
	cp := l.checkpoint(t, 20)
	cosig, held, err := transparency.RequestCosignature(ctx, tw.srv.Client(), tw.srv.URL, key, l.v, cp, 0, prove)
	if err != nil || held != 20 || len(proved) != 1 || proved[0] != 10 {
		t.Fatalf("from 0: held %d, proofs from %v, %v; want 20, one proof from 10", held, proved, err)
	}
	withCosig, err := transparency.AppendCosignatures(cp, cosig)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := transparency.CountCosignatures(withCosig, l.v, []note.Verifier{key}); err != nil || n != 1 || strings.Count(string(cosig), "\n") != 1 {
		t.Errorf("%q: %d cosignatures, %v; want its one line", cosig, n, err)
	}
	other := newTestWitness(t, "witness.weir.test/w1", l.v) // the same name, another key
	if _, _, err := transparency.RequestCosignature(ctx, other.srv.Client(), other.srv.URL, key, l.v, cp, 0, prove); err == nil || !strings.Contains(err.Error(), "no signature of its key") {
		t.Errorf("a witness with another key: %v", err)
	}
	if _, held, err := transparency.RequestCosignature(ctx, tw.srv.Client(), tw.srv.URL, key, l.v, l.checkpoint(t, 15), 0, prove); err == nil || held != 20 || !strings.Contains(err.Error(), "past the checkpoint's 15") {
		t.Errorf("a checkpoint older than the witness's: held %d, %v", held, err)
	}
	if _, _, err := transparency.RequestCosignature(ctx, tw.srv.Client(), tw.srv.URL, key, key, cp, 0, prove); err == nil {
		t.Error("a checkpoint checked with the witness's key as the log's: no error")
	}
}
