// SPDX-License-Identifier: Apache-2.0

package transparency_test

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

const witnessOrigin = "ca.weir.test/log"

// TestWitnessCosignsGrowth: the witness cosigns a log's first
// checkpoint (old size 0, no proof), then a bigger one with the
// consistency proof from the size it holds, and the same one again.
func TestWitnessCosignsGrowth(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 40)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	if _, _, err := tw.add(t, l, 0, nil, l.checkpoint(t, 5)); err != nil {
		t.Fatalf("first checkpoint: %v", err)
	}
	if _, _, err := tw.add(t, l, 5, l.proof(t, 23, 5), l.checkpoint(t, 23)); err != nil {
		t.Fatalf("5 → 23: %v", err)
	}
	if _, _, err := tw.add(t, l, 23, nil, l.checkpoint(t, 23)); err != nil {
		t.Fatalf("23 again: %v", err)
	}
	if _, _, err := tw.add(t, l, 23, l.proof(t, 40, 23), l.checkpoint(t, 40)); err != nil {
		t.Fatalf("23 → 40: %v", err)
	}
}

// TestWitnessRefusals: each refusal of c2sp.org/tlog-witness, as its
// HTTP status (and the 409's Content-Type and size) and as the client's
// typed error.
func TestWitnessRefusals(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 30)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	if _, _, err := tw.add(t, l, 0, nil, l.checkpoint(t, 10)); err != nil {
		t.Fatal(err)
	}
	badProof := l.proof(t, 20, 10)
	badProof[0][0] ^= 1
	impostor, _ := logKey(t, witnessOrigin) // the origin's name, another key
	forged, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: witnessOrigin, Size: 20, Hash: mustTreeHash(t, l, 20)}, impostor)
	if err != nil {
		t.Fatal(err)
	}
	tampered := []byte(strings.Replace(string(l.checkpoint(t, 20)), "\n— "+witnessOrigin+" ", "\n— "+witnessOrigin+" AAAA", 1))
	other := newWitnessLog(t, "other.weir.test/log", 0, 3)
	for _, c := range []struct {
		name       string
		old        int64
		proof      []tlog.Hash
		cp         []byte
		status     int
		reason     error
		answerSize int64
	}{
		{"old size not the witness's", 0, nil, l.checkpoint(t, 20), 409, transparency.ErrWitnessOldSize, 10},
		{"old size bigger than held", 15, l.proof(t, 20, 15), l.checkpoint(t, 20), 409, transparency.ErrWitnessOldSize, 10},
		{"bad proof", 10, badProof, l.checkpoint(t, 20), 422, transparency.ErrWitnessBadProof, 0},
		{"proof of other sizes", 10, l.proof(t, 20, 11), l.checkpoint(t, 20), 422, transparency.ErrWitnessBadProof, 0},
		{"no proof", 10, nil, l.checkpoint(t, 20), 422, transparency.ErrWitnessBadProof, 0},
		{"proof at the held size", 10, l.proof(t, 20, 10), l.checkpoint(t, 10), 422, transparency.ErrWitnessBadProof, 0},
		{"signed by another key", 10, l.proof(t, 20, 10), forged, 403, transparency.ErrWitnessBadSignature, 0},
		{"log signature tampered", 10, l.proof(t, 20, 10), tampered, 403, transparency.ErrWitnessBadSignature, 0},
		{"unknown origin", 0, nil, other.checkpoint(t, 3), 404, transparency.ErrWitnessUnknownLog, 0},
		{"old size above the checkpoint's", 25, nil, l.checkpoint(t, 20), 400, transparency.ErrWitnessMalformed, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, ctype, body := tw.post(t, transparency.AddCheckpointRequest(c.old, c.proof, c.cp))
			if status != c.status {
				t.Errorf("status %d (%q), want %d", status, body, c.status)
			}
			if c.reason == transparency.ErrWitnessOldSize && (ctype != "text/x.tlog.size" || body != "10\n") {
				t.Errorf("409 %q %q, want text/x.tlog.size \"10\\n\"", ctype, body)
			}
			_, size, err := tw.add(t, l, c.old, c.proof, c.cp)
			var refusal *transparency.WitnessRefusal
			if !errors.Is(err, c.reason) || !errors.As(err, &refusal) || size != c.answerSize {
				t.Errorf("client: size %d, %v; want size %d, %v", size, err, c.answerSize, c.reason)
			}
		})
	}
	// None moved the witness: it still holds 10 and cosigns 10 → 20.
	if _, _, err := tw.add(t, l, 10, l.proof(t, 20, 10), l.checkpoint(t, 20)); err != nil {
		t.Fatal(err)
	}
}

func mustTreeHash(t *testing.T, l *witnessLog, n int64) tlog.Hash {
	t.Helper()
	h, err := tlog.TreeHash(n, l.m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestWitnessMalformedRequests: a body that is not an add-checkpoint
// request is 400 Bad Request, with what is wrong; another method is 405,
// a body too big 413.
func TestWitnessMalformedRequests(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 8)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	cp := string(l.checkpoint(t, 8))
	hash := tlog.Hash{1}.String()
	notCheckpoint, err := note.Sign(&note.Note{Text: witnessOrigin + "\n01\n" + hash + "\n"}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"no empty line", "old 0\n" + hash + "\n", "no empty line"},
		{"no old line", "\n" + cp, "want \"old <size>\""},
		{"new instead of old", "new 0\n\n" + cp, "want \"old <size>\""},
		{"leading zero", "old 05\n\n" + cp, "leading zeroes"},
		{"negative", "old -1\n\n" + cp, "not a decimal tree size"},
		{"not a number", "old five\n\n" + cp, "not a decimal tree size"},
		{"two spaces", "old  0\n\n" + cp, "not a decimal tree size"},
		{"proof not base64", "old 0\n!!!\n\n" + cp, "line 2: the proof hash"},
		{"proof hash short", "old 0\nAAAA\n\n" + cp, "line 2: the proof hash"},
		{"64 proof lines", "old 0\n" + strings.Repeat(hash+"\n", 64) + "\n" + cp, "64 consistency proof lines"},
		{"nothing after the empty line", "old 0\n\n", "no checkpoint"},
		{"old 0 with a proof", "old 0\n" + hash + "\n\n" + cp, "old size 0 takes no consistency proof"},
		{"checkpoint unsigned", "old 0\n\n" + strings.SplitAfter(cp, "\n\n")[0], "not a signed note"},
		{"origin line only", "old 0\n\n" + witnessOrigin, "no origin line"},
		{"not a checkpoint", "old 0\n\n" + string(notCheckpoint), `size "01" is not a decimal tree size`},
		{"old above new", "old 9\n\n" + cp, "bigger than the checkpoint's size 8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := tw.post(t, []byte(c.body))
			if status != 400 || !strings.Contains(body, c.want) {
				t.Errorf("%d %q, want 400 with %q", status, body, c.want)
			}
		})
	}
	resp, err := tw.srv.Client().Get(tw.srv.URL + "/add-checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
	if status, _, _ := tw.post(t, []byte("old 0\n"+strings.Repeat(hash+"\n", 2000)+"\n"+cp)); status != 413 {
		t.Errorf("a body of 90 kB: %d, want 413", status)
	}
	if _, _, err := tw.add(t, l, 0, nil, []byte(cp)); err != nil {
		t.Fatalf("the witness, after the malformed requests: %v", err)
	}
}

// TestWitnessRefusesForks is the acceptance "against a witness that has
// cosigned, the fork is refused": after the witness cosigned the log at
// size 10, a checkpoint of size 10 with another root (409 Conflict), and
// a bigger tree grown from it (422: no proof can show it contains the
// tree cosigned) are refused, also after the witness restarts from its
// state file, while the true log goes on being cosigned.
func TestWitnessRefusesForks(t *testing.T) {
	honest := newWitnessLog(t, witnessOrigin, 0, 20)
	tw := newTestWitness(t, "witness.weir.test/w1", honest.v)
	if _, _, err := tw.add(t, honest, 0, nil, honest.checkpoint(t, 10)); err != nil {
		t.Fatal(err)
	}
	// The fork: the same key and origin, entries 0…8 and then others.
	fork := &witnessLog{m: &memLog{}, signer: honest.signer, v: honest.v}
	fork.m.add(t, entries(0, 9)...)
	fork.m.add(t, entries(1000, 11)...)
	refused := func(t *testing.T) {
		t.Helper()
		status, ctype, body := tw.post(t, transparency.AddCheckpointRequest(10, nil, fork.checkpoint(t, 10)))
		if status != 409 || strings.HasPrefix(ctype, "text/x.tlog.size") {
			t.Errorf("the fork at size 10: %d %s %q, want 409 (not a size answer)", status, ctype, body)
		}
		if _, _, err := tw.add(t, fork, 10, nil, fork.checkpoint(t, 10)); !errors.Is(err, transparency.ErrWitnessFork) {
			t.Errorf("the fork at size 10: %v, want %v", err, transparency.ErrWitnessFork)
		}
		if _, _, err := tw.add(t, fork, 10, fork.proof(t, 20, 10), fork.checkpoint(t, 20)); !errors.Is(err, transparency.ErrWitnessBadProof) {
			t.Errorf("the fork grown to 20: %v, want %v", err, transparency.ErrWitnessBadProof)
		}
		if _, size, err := tw.add(t, fork, 0, nil, fork.checkpoint(t, 20)); !errors.Is(err, transparency.ErrWitnessOldSize) || size < 10 {
			t.Errorf("the fork from old size 0: size %d, %v; want the size held and %v", size, err, transparency.ErrWitnessOldSize)
		}
	}
	refused(t)
	state, err := os.ReadFile(tw.state)
	if err != nil || !strings.Contains(string(state), mustTreeHash(t, honest, 10).String()) {
		t.Fatalf("the state file holds %q (%v), want the root cosigned", state, err)
	}
	tw.restart(t, honest.v)
	refused(t)
	if _, _, err := tw.add(t, honest, 10, honest.proof(t, 15, 10), honest.checkpoint(t, 15)); err != nil {
		t.Fatalf("the true log, 10 → 15 after the restart: %v", err)
	}
	tw.restart(t, honest.v)
	if _, size, err := tw.add(t, honest, 10, honest.proof(t, 20, 10), honest.checkpoint(t, 20)); !errors.Is(err, transparency.ErrWitnessOldSize) || size != 15 {
		t.Errorf("after a second restart: size %d, %v; want 15 held", size, err)
	}
}

// TestWitnessSerialisesOneOrigin: checkpoints of one size, half of them
// a fork, all sent at once from old size 0: exactly one is cosigned, and
// every other is told the size now held.
func TestWitnessSerialisesOneOrigin(t *testing.T) {
	honest := newWitnessLog(t, witnessOrigin, 0, 12)
	fork := &witnessLog{m: &memLog{}, signer: honest.signer, v: honest.v}
	fork.m.add(t, entries(500, 12)...)
	tw := newTestWitness(t, "witness.weir.test/w1", honest.v)
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		l := honest
		if i%2 == 1 {
			l = fork
		}
		cp := l.checkpoint(t, 12)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = transparency.AddCheckpoint(t.Context(), tw.srv.Client(), tw.srv.URL, 0, nil, cp)
		}()
	}
	wg.Wait()
	cosigned := 0
	for _, err := range errs {
		switch {
		case err == nil:
			cosigned++
		case !errors.Is(err, transparency.ErrWitnessOldSize):
			t.Errorf("a refusal %v, want %v", err, transparency.ErrWitnessOldSize)
		}
	}
	if cosigned != 1 {
		t.Errorf("%d of %d checkpoints of size 12 cosigned, want 1", cosigned, n)
	}
}

// TestWitnessState: the state file must exist (the first start makes
// it, once); a file that is not a witness's state is refused.
func TestWitnessState(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 1)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	if err := transparency.InitWitnessState(tw.state); err == nil || !strings.Contains(err.Error(), "never replaced") {
		t.Errorf("InitWitnessState over a state: %v", err)
	}
	for _, c := range []struct{ name, data, want string }{
		{"missing", "", "does not exist"},
		{"not JSON", "size 5", "invalid character"},
		{"no logs", `{}`, `no "logs" object`},
		{"unknown field", `{"logs":{},"extra":1}`, "unknown field"},
		{"negative size", `{"logs":{"a":{"size":-1,"hash":"` + tlog.Hash{}.String() + `","cosigned":true}}}`, "not a state the witness writes"},
		{"size not cosigned", `{"logs":{"a":{"size":4,"hash":"` + tlog.Hash{}.String() + `"}}}`, "not a state the witness writes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := t.TempDir() + "/state.json"
			if c.data != "" {
				if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := transparency.NewWitness(transparency.WitnessConfig{Name: "w", Key: tw.key, Logs: []note.Verifier{l.v}, StatePath: path})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want an error with %q", err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		cfg  transparency.WitnessConfig
		want string
	}{
		{"no logs", transparency.WitnessConfig{Name: "w", Key: tw.key, StatePath: tw.state}, "no log"},
		{"bad name", transparency.WitnessConfig{Name: "a b", Key: tw.key, Logs: []note.Verifier{l.v}, StatePath: tw.state}, "witness key"},
		{"two keys for a log", transparency.WitnessConfig{Name: "w", Key: tw.key, Logs: []note.Verifier{l.v, l.v}, StatePath: tw.state}, "two keys"},
	} {
		if _, err := transparency.NewWitness(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestWitnessStateWriteFails: when the state cannot be written, the
// witness answers 500 and returns no cosignature, and its memory does
// not move: once the file can be written again, it goes on from the
// size it held.
func TestWitnessStateWriteFails(t *testing.T) {
	l := newWitnessLog(t, witnessOrigin, 0, 10)
	tw := newTestWitness(t, "witness.weir.test/w1", l.v)
	if _, _, err := tw.add(t, l, 0, nil, l.checkpoint(t, 5)); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(tw.state)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(tw.state)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if status, _, body := tw.post(t, transparency.AddCheckpointRequest(5, l.proof(t, 10, 5), l.checkpoint(t, 10))); status != 500 || strings.Contains(body, "—") {
		t.Errorf("the state unwritable: %d %q, want 500 and no cosignature", status, body)
	}
	cosig, _, err := tw.add(t, l, 5, l.proof(t, 10, 5), l.checkpoint(t, 10))
	var refusal *transparency.WitnessRefusal
	if err == nil || errors.As(err, &refusal) || cosig != nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("the client, the state unwritable: %q, %v; want an error with the 500, not a refusal", cosig, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tw.state, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tw.add(t, l, 5, l.proof(t, 10, 5), l.checkpoint(t, 10)); err != nil {
		t.Fatalf("5 → 10 once the state is writable: %v", err)
	}
}

// lockedBuffer is a log's output, written by the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWitnessLogsForkEvidence: a fork refused is logged with the
// request, signed by the log, as it came; a wrong old size is not.
func TestWitnessLogsForkEvidence(t *testing.T) {
	honest := newWitnessLog(t, witnessOrigin, 0, 10)
	fork := &witnessLog{m: &memLog{}, signer: honest.signer, v: honest.v}
	fork.m.add(t, entries(900, 10)...)
	tw := newTestWitness(t, "witness.weir.test/w1", honest.v)
	var out lockedBuffer
	srv := httptest.NewServer(tw.w.Handler(slog.New(slog.NewTextHandler(&out, nil))))
	defer srv.Close()
	if _, _, err := transparency.AddCheckpoint(t.Context(), srv.Client(), srv.URL, 0, nil, honest.checkpoint(t, 10)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := transparency.AddCheckpoint(t.Context(), srv.Client(), srv.URL, 0, nil, fork.checkpoint(t, 10)); !errors.Is(err, transparency.ErrWitnessOldSize) {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Errorf("a wrong old size logged: %s", out.String())
	}
	forked := fork.checkpoint(t, 10)
	if _, _, err := transparency.AddCheckpoint(t.Context(), srv.Client(), srv.URL, 10, nil, forked); !errors.Is(err, transparency.ErrWitnessFork) {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, strconv.Quote(string(transparency.AddCheckpointRequest(10, nil, forked)))) {
		t.Errorf("the fork's log: %s", got)
	}
}
