// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
)

// logWitnessVerbs are the verbs of "weir log" that run a witness of
// weir's verifiable log (c2sp.org/tlog-witness).
var logWitnessVerbs = map[string]subcommand{
	"witness":        {"witness -key FILE -name NAME -log VKEY|@FILE... -state FILE -listen ADDR [-init]", logWitness},
	"witness-keygen": {"witness-keygen -name NAME -o FILE", logWitnessKeygen},
}

// logWitnessKeygen makes a witness's Ed25519 key and prints its verifier
// key, the line the logs it witnesses are given.
func logWitnessKeygen(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("log witness-keygen", "log witness-keygen -name NAME -o FILE",
		"Makes a witness's key (Ed25519, PKCS#8 PEM, mode 0600; never over a file)\n"+
			"and prints its verifier key (cosignature/v1), which a log configures to\n"+
			"require this witness's cosignatures.", stderr)
	name := fs.String("name", "", "the witness's `name`, such as witness.example.internal/w1 (no spaces, no \"+\")")
	out := fs.String("o", "", "the key `file` to write")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case *name == "":
		return usageError(fs, stderr, "-name is required")
	case *out == "":
		return usageError(fs, stderr, "-o is required")
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fail(stderr, "log witness-keygen", err)
	}
	vkey, err := transparency.WitnessVerifierKey(*name, key)
	if err != nil {
		return usageError(fs, stderr, err.Error())
	}
	pemKey, err := ca.EncodeKeyPEM(key)
	if err == nil {
		err = writeNewSecret(*out, pemKey)
	}
	if err != nil {
		return fail(stderr, "log witness-keygen", err)
	}
	fmt.Fprintln(stdout, vkey)
	return 0
}

// writeNewSecret writes data to a new file at path, mode 0600, and fails
// if path exists.
func writeNewSecret(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; weir never overwrites a key", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// logKeys is the -log flag: the logs' verifier keys, each given inline
// or as @FILE (one key a line), added to the witness's configuration.
type logKeys struct{ cfg *transparency.WitnessConfig }

func (k logKeys) String() string {
	if k.cfg == nil {
		return ""
	}
	return fmt.Sprintf("%d log keys", len(k.cfg.Logs))
}

func (k logKeys) Set(s string) error {
	lines := []string{s}
	if file, ok := strings.CutPrefix(s, "@"); ok {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		lines = strings.Split(string(data), "\n")
	}
	n := 0
	for _, l := range lines {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if err := k.cfg.AddLogKey(l); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s holds no verifier key", s)
	}
	return nil
}

// logWitness serves a witness until ctx ends.
func logWitness(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("log witness", "log witness -key FILE -name NAME -log VKEY|@FILE... -state FILE -listen ADDR [-init]",
		"Serves a witness of weir's verifiable log (c2sp.org/tlog-witness: POST\n"+
			"/add-checkpoint) over HTTP: it cosigns a log's checkpoint when the log's key\n"+
			"signed it and it extends the one it cosigned before, and refuses a fork.\n"+
			"Its state (per log, the latest checkpoint cosigned) is -state; -init makes\n"+
			"it, on the first start only. A witness whose state is lost must get a new\n"+
			"key (weir log witness-keygen): it no longer knows what it cosigned.", stderr)
	var cfg transparency.WitnessConfig
	keyFile := fs.String("key", "", "the witness's key `file` (weir log witness-keygen)")
	fs.StringVar(&cfg.Name, "name", "", "the witness's `name`, the one its key was made with")
	fs.Var(logKeys{&cfg}, "log", "a witnessed log's verifier key, or @`FILE` holding keys, one a line (repeat for several)")
	fs.StringVar(&cfg.StatePath, "state", "", "the witness's state `file`")
	listen := fs.String("listen", "", "the `address` to listen on, such as :8443 or 127.0.0.1:0")
	initState := fs.Bool("init", false, "make an empty -state first (fails if it exists)")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	for _, req := range []struct{ flag, value string }{{"key", *keyFile}, {"name", cfg.Name}, {"state", cfg.StatePath}, {"listen", *listen}} {
		if req.value == "" {
			return usageError(fs, stderr, "-"+req.flag+" is required")
		}
	}
	if len(cfg.Logs) == 0 {
		return usageError(fs, stderr, "-log is required: the key of a log to witness")
	}
	key, err := ca.OpenSigner("witness key", ca.SignerConfig{}, *keyFile)
	if err != nil {
		return fail(stderr, "log witness", err)
	}
	defer key.Close()
	cfg.Key = key
	if *initState {
		if err := transparency.InitWitnessState(cfg.StatePath); err != nil {
			return fail(stderr, "log witness", err)
		}
	}
	w, err := transparency.NewWitness(cfg)
	if err != nil {
		return fail(stderr, "log witness", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(stderr, "log witness", fmt.Errorf("-listen %s: %w", *listen, err))
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	srv := &http.Server{
		Handler:           w.Handler(log),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(stdout, "witness %s listening on http://%s (verifier key %s, %d logs)\n", cfg.Name, ln.Addr(), w.VerifierKey(), len(cfg.Logs))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(stderr, "log witness", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fail(stderr, "log witness", err)
	}
	return 0
}
