// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestProveConsistency: the latest tree's proof from a checkpoint held
// verifies, through JSON; a fork signed with the log's key, a proof from
// another size, a log smaller than the checkpoint held and a broken
// signature each fail with what is wrong.
func TestProveConsistency(t *testing.T) {
	es := logEntries(t, 0, 600)
	st, signer, v := sequencedLog(t, es)
	ctx := t.Context()
	held := func(size int64) []byte {
		cp, err := st.LogCheckpoint(ctx, size)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	p, err := transparency.ProveConsistency(ctx, st, 300)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back transparency.ConsistencyProof
	if err := json.Unmarshal(b, &back); err != nil || !strings.Contains(string(b), `"oldSize":300`) {
		t.Fatalf("the JSON form %s (%v)", b, err)
	}
	if c, err := back.Verify(v, held(300)); err != nil || c.Size != 600 || c.Hash != rfcRoot(es) {
		t.Fatalf("Verify from 300 = %+v, %v", c, err)
	}
	same, err := transparency.ProveConsistency(ctx, st, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := same.Verify(v, held(600)); err != nil {
		t.Fatalf("Verify from the latest size itself: %v", err)
	}
	if _, err := transparency.ProveConsistency(ctx, st, 601); err == nil || !strings.Contains(err.Error(), "size 601 is not a size the log had (it has 600 entries)") {
		t.Fatalf("ProveConsistency(601) = %v", err)
	}

	// A fork: entry 10 rewritten, the tree rebuilt and signed with the log's key.
	fork := &memLog{}
	forged := append([][]byte{}, es...)
	forged[10] = es[11]
	fork.add(t, forged...)
	fcp, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: signer.Name(), Size: 600, Hash: fork.root(t)}, signer)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := tlog.ProveTree(600, 300, fork)
	if err != nil {
		t.Fatal(err)
	}
	rewound := p
	rewound.OldSize, rewound.Checkpoint = 600, held(500)
	tampered := p
	tampered.Proof = append([]tlog.Hash{}, p.Proof...)
	tampered.Proof[0][0] ^= 1
	for _, tc := range []struct {
		name string
		p    transparency.ConsistencyProof
		held []byte
		want string
	}{
		{"a fork", transparency.ConsistencyProof{OldSize: 300, Proof: fp, Checkpoint: fcp}, held(300), "proof: the tree of size 600 does not extend the checkpoint held of size 300"},
		{"a fork at the size held", transparency.ConsistencyProof{OldSize: 600, Checkpoint: fcp}, held(600), "does not extend the checkpoint held of size 600"},
		{"a proof hash altered", tampered, held(300), "does not extend the checkpoint held of size 300"},
		{"a proof from another size", p, held(400), "proof: from size 300, the checkpoint held is of size 400"},
		{"a smaller log", rewound, held(600), "proof: the log's size 500 is smaller than the checkpoint held's 600: rewound"},
		{"the checkpoint held altered", p, []byte(strings.Replace(string(held(300)), "\n300\n", "\n301\n", 1)), "the checkpoint held: checkpoint: invalid signature"},
		{"the proof's checkpoint altered", transparency.ConsistencyProof{OldSize: 300, Proof: p.Proof, Checkpoint: []byte(strings.Replace(string(p.Checkpoint), "\n600\n", "\n601\n", 1))}, held(300), "the proof's checkpoint: invalid signature"},
	} {
		if _, err := tc.p.Verify(v, tc.held); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Verify = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestParseVerifierKey: the log key's verifier key, as NewNoteSigner
// gives it, reads back (with the newline of a key file) and checks the
// log's checkpoints; anything else is refused, naming what was given.
func TestParseVerifierKey(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, vkey, err := transparency.NewNoteSigner("ca.weir.test/log", priv)
	if err != nil {
		t.Fatal(err)
	}
	v, err := transparency.ParseVerifierKey(vkey + "\n")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: signer.Name(), Size: 1}, signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := transparency.OpenCheckpoint(cp, v); err != nil {
		t.Fatalf("the parsed key does not open the log's checkpoint: %v", err)
	}
	for _, bad := range []string{"", "ca.weir.test/log", "ca.weir.test/log+00000000+AQ=="} {
		if _, err := transparency.ParseVerifierKey(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q is not a note verifier key", bad)) {
			t.Errorf("ParseVerifierKey(%q) = %v", bad, err)
		}
	}
}
