// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/weir-pki/weir/acme/transparency"
)

// TestLogWitnessKeygen: witness-keygen writes a key file at 0600 and
// prints the verifier key of a cosignature/v1 key with its name; it
// never writes over a file.
func TestLogWitnessKeygen(t *testing.T) {
	key := filepath.Join(t.TempDir(), "witness-key.pem")
	code, out, errOut := runCLI("log", "witness-keygen", "-name", "witness.weir.test/w1", "-o", key)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v, err := transparency.ParseWitnessKey(strings.TrimSuffix(out, "\n"))
	if err != nil || v.Name() != "witness.weir.test/w1" || strings.Count(out, "\n") != 1 {
		t.Errorf("printed %q: %v", out, err)
	}
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v, %v; want mode 0600", st, err)
	}
	before, _ := os.ReadFile(key)
	if code, _, errOut := runCLI("log", "witness-keygen", "-name", "w2", "-o", key); code != 1 || !strings.Contains(errOut, "never overwrites") {
		t.Errorf("over the key: exit %d, %q", code, errOut)
	}
	if after, _ := os.ReadFile(key); string(after) != string(before) {
		t.Error("the key file changed")
	}
}

// TestLogWitnessFlags: missing and bad flags are usage errors (exit 2)
// that say which flag; a key readable by others, a missing state, or a
// state -init would replace fail (exit 1).
func TestLogWitnessFlags(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	if code, _, errOut := runCLI("log", "witness-keygen", "-name", "w1", "-o", key); code != 0 {
		t.Fatal(errOut)
	}
	_, logVKey := newLogKey(t)
	keysFile := filepath.Join(dir, "logs.txt")
	if err := os.WriteFile(keysFile, []byte("\n"+logVKey+"\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyFile := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(emptyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.json")
	openKey := filepath.Join(dir, "open-key.pem")
	data, _ := os.ReadFile(key)
	if err := os.WriteFile(openKey, data, 0o644); err != nil {
		t.Fatal(err)
	}
	all := func(drop string, extra ...string) []string {
		args := []string{"log", "witness"}
		for _, f := range [][2]string{{"-key", key}, {"-name", "w1"}, {"-log", "@" + keysFile}, {"-state", state}, {"-listen", "127.0.0.1:0"}} {
			if f[0] != drop {
				args = append(args, f[0], f[1])
			}
		}
		return append(args, extra...)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"keygen without -name", []string{"log", "witness-keygen", "-o", filepath.Join(dir, "k2")}, 2, "-name is required"},
		{"keygen without -o", []string{"log", "witness-keygen", "-name", "w"}, 2, "-o is required"},
		{"keygen bad name", []string{"log", "witness-keygen", "-name", "a+b", "-o", filepath.Join(dir, "k3")}, 2, "invalid name"},
		{"keygen argument", []string{"log", "witness-keygen", "-name", "w", "-o", filepath.Join(dir, "k4"), "extra"}, 2, `unexpected argument "extra"`},
		{"no -key", all("-key"), 2, "-key is required"},
		{"no -name", all("-name"), 2, "-name is required"},
		{"no -state", all("-state"), 2, "-state is required"},
		{"no -listen", all("-listen"), 2, "-listen is required"},
		{"no -log", all("-log"), 2, "-log is required"},
		{"bad -log", all("", "-log", "not-a-key"), 2, `"not-a-key" is not a log's verifier key`},
		{"-log file missing", all("", "-log", "@"+filepath.Join(dir, "none")), 2, "no such file"},
		{"-log file empty", all("", "-log", "@"+emptyFile), 2, "holds no verifier key"},
		{"key readable by others", all("-key", "-key", openKey), 1, "readable by group or others"},
		{"no state", all(""), 1, "does not exist"},
		{"listen address bad", all("-listen", "-listen", "127.0.0.1:x", "-init"), 1, "127.0.0.1:x"},
		{"-init over a state", all("", "-init"), 1, "never replaced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, %q; want %d with %q", code, errOut, c.code, c.want)
			}
		})
	}
	// The "listen address bad" case made the state with -init: it exists.
	if _, err := os.Stat(state); err != nil {
		t.Errorf("-init made no state: %v", err)
	}
}

func newLogKey(t *testing.T) (note.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, vkey, err := transparency.NewNoteSigner("ca.weir.test/log", priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

// TestLogWitnessServes: weir log witness, on a real listener, cosigns a
// log's checkpoints with the key witness-keygen made, refuses a fork of
// what it cosigned, and exits 0 when its context ends.
func TestLogWitnessServes(t *testing.T) {
	dir := t.TempDir()
	key, state := filepath.Join(dir, "key.pem"), filepath.Join(dir, "state.json")
	code, vkey, errOut := runCLI("log", "witness-keygen", "-name", "witness.weir.test/w1", "-o", key)
	if code != 0 {
		t.Fatal(errOut)
	}
	witnessKey, err := transparency.ParseWitnessKey(strings.TrimSpace(vkey))
	if err != nil {
		t.Fatal(err)
	}
	logSigner, logVKey := newLogKey(t)
	logKey, err := note.NewVerifier(logVKey)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- logWitness(ctx, []string{"-key", key, "-name", "witness.weir.test/w1", "-log", logVKey, "-state", state, "-listen", "127.0.0.1:0", "-init"}, outW, &stderr)
		outW.Close()
	}()
	first, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no listening line: %v (exit %d, %s)", err, <-done, stderr.String())
	}
	go io.Copy(io.Discard, outR)
	m := regexp.MustCompile(`listening on (http://\S+) \(verifier key (\S+),`).FindStringSubmatch(first)
	if m == nil || m[2] != strings.TrimSpace(vkey) {
		t.Fatalf("the first line %q does not name the address and the key %s", first, vkey)
	}
	url := m[1]

	sign := func(size int64, root tlog.Hash) []byte {
		b, err := transparency.SignCheckpoint(transparency.Checkpoint{Origin: "ca.weir.test/log", Size: size, Hash: root}, logSigner)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	leaf := tlog.RecordHash([]byte(`{"type":"issuance"}`))
	cp := sign(1, leaf)
	cosig, _, err := transparency.AddCheckpoint(ctx, nil, url, 0, nil, cp)
	if err != nil {
		t.Fatal(err)
	}
	withCosig, err := transparency.AppendCosignatures(cp, cosig)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := transparency.CountCosignatures(withCosig, logKey, []note.Verifier{witnessKey}); err != nil || n != 1 {
		t.Errorf("the cosignature, with the key witness-keygen printed: %d, %v", n, err)
	}
	if _, _, err := transparency.AddCheckpoint(ctx, nil, url, 1, nil, sign(1, tlog.Hash{1})); !errors.Is(err, transparency.ErrWitnessFork) {
		t.Errorf("a fork at size 1: %v, want %v", err, transparency.ErrWitnessFork)
	}
	if _, size, err := transparency.AddCheckpoint(ctx, nil, url, 0, nil, sign(2, tlog.Hash{2})); !errors.Is(err, transparency.ErrWitnessOldSize) || size != 1 {
		t.Errorf("old size 0 after 1: size %d, %v", size, err)
	}

	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after the context ended: %s", code, stderr.String())
	}
}
