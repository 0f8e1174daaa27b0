// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/weir-pki/weir/acme/transparency"
)

// cmdLog works on the verifiable log: its served tiles or a mirror of
// them, and inclusion proofs (acme/transparency). Only prove asks the
// running weir.
func cmdLog(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"verify":      {"verify -key VKEY|@FILE (-url URL | -dir DIR) [-checkpoint FILE]...", logVerify},
		"prove":       {"prove SERIAL [-o FILE]", logProve},
		"check-proof": {"check-proof -key VKEY|@FILE [-cert FILE] PROOF.json", logCheckProof},
		"monitor":     {logMonitorUsage, logMonitor},
	}
	for name, v := range logWitnessVerbs {
		verbs[name] = v
	}
	return runGroup(ctx, "log", verbs, []string{"verify", "prove", "check-proof", "monitor", "witness", "witness-keygen"}, args, stdout, stderr)
}

// keyUsage is the help of -key, the log's verifier key.
const keyUsage = "the log's verifier `key` (a note verifier key: name+hash+base64), or @FILE to read it from FILE"

// logVerify audits a whole log (transparency.VerifyLog).
func logVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("log verify", "log verify -key VKEY|@FILE (-url URL | -dir DIR) [-checkpoint FILE]...",
		"Audits the whole verifiable log, served (-url, weir's is https://HOST/log/) or\n"+
			"mirrored as tlog-tiles in a directory (-dir): the checkpoint is signed by the\n"+
			"log's key, every entry parses, every hash tile is the one recomputed from the\n"+
			"entries, the root is the checkpoint's, and each checkpoint you kept from\n"+
			"earlier (-checkpoint) is of the same tree. Exit 0 only when all of it holds;\n"+
			"else 1 with what differs and where.", stderr)
	key := fs.String("key", "", keyUsage)
	base := fs.String("url", "", "the served log's base `URL`")
	dir := fs.String("dir", "", "the `directory` of a mirror of the log")
	var held []string
	fs.Func("checkpoint", "a signed checkpoint `file` you kept from earlier (repeatable)", func(s string) error {
		held = append(held, s)
		return nil
	})
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	if (*base == "") == (*dir == "") {
		return usageError(fs, stderr, "give one of -url and -dir")
	}
	v, err := logKey(*key, transparency.ParseVerifierKey)
	if err != nil {
		return usageError(fs, stderr, err.Error())
	}
	var trusted [][]byte
	for _, f := range held {
		b, err := os.ReadFile(f)
		if err != nil {
			return fail(stderr, fs.Name(), fmt.Errorf("-checkpoint: %w", err))
		}
		trusted = append(trusted, b)
	}
	var src transparency.TileSource = transparency.DirSource(*dir)
	if *base != "" {
		src = transparency.HTTPSource{Base: *base}
	}
	rep, err := transparency.VerifyLog(ctx, src, v, trusted)
	if err != nil {
		return fail(stderr, fs.Name(), err)
	}
	fmt.Fprintf(stdout, "ok: the log %s verifies: %d entries (%d issued, %d revoked, %d events), root %s\n",
		v.Name(), rep.Size, rep.Kinds[transparency.KindIssued], rep.Kinds[transparency.KindRevoked], rep.Kinds[transparency.KindEvent], rep.Root)
	fmt.Fprintf(stdout, "%d hash tiles match the entries; %d of your checkpoints are consistent with it; took %s\n",
		rep.HashTiles, rep.Checkpoints, rep.Duration.Round(1e6))
	return 0
}

// logProve asks the running weir for a certificate's inclusion proof.
func logProve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("log prove", "log prove SERIAL [-o FILE]",
		"Asks the running weir for the inclusion proof of the issuance of the certificate\n"+
			"SERIAL (hex) in its verifiable log: the entry, its index, the proof's hashes and\n"+
			"the signed checkpoint, as JSON (with or without --json). Anyone with the log's\n"+
			"key checks it offline with \"weir log check-proof\".", stderr)
	out := fs.String("o", "", "write the proof to this `file` instead of standard output")
	serial, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	c, err := af.client(stderr)
	if err != nil {
		return fail(stderr, fs.Name(), err)
	}
	var p transparency.InclusionProof
	if err := c.Get(ctx, proofPath(serial), nil, &p); err != nil {
		return fail(stderr, fs.Name(), err)
	}
	if *out == "" {
		printJSON(stdout, p)
		return 0
	}
	var b bytes.Buffer
	printJSON(&b, p)
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		return fail(stderr, fs.Name(), err)
	}
	fmt.Fprintf(stdout, "wrote the proof of entry %d to %s\n", p.Index, *out)
	return 0
}

// proofPath is the admin API's path of the proof of serial.
func proofPath(serial string) string { return "/api/v1/log/proof/" + url.PathEscape(serial) }

// logCheckProof checks an inclusion proof offline.
func logCheckProof(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("log check-proof", "log check-proof -key VKEY|@FILE [-cert FILE] PROOF.json",
		"Checks an inclusion proof (\"weir log prove\") offline: its checkpoint is signed by\n"+
			"the log's key and its entry is the leaf it names of that checkpoint's tree; with\n"+
			"-cert, that the entry is the issuance of exactly that certificate. Exit 0 only\n"+
			"then; else 1 with what failed.", stderr)
	key := fs.String("key", "", keyUsage)
	certFile := fs.String("cert", "", "the certificate's `file` (PEM or DER) the proof must be the issuance of")
	file, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	v, err := logKey(*key, transparency.ParseVerifierKey)
	if err != nil {
		return usageError(fs, stderr, err.Error())
	}
	p, err := readProof(file)
	if err != nil {
		return fail(stderr, fs.Name(), err)
	}
	c, e, err := p.Verify(v)
	if err != nil {
		return fail(stderr, fs.Name(), err)
	}
	if *certFile != "" {
		der, err := readCertFile(*certFile)
		if err == nil {
			err = p.VerifyCertificate(v, der)
		}
		if err != nil {
			return fail(stderr, fs.Name(), err)
		}
	}
	tw := newTable(stdout, "")
	fmt.Fprintf(tw, "ok: entry %d is in the log %s\n", p.Index, c.Origin)
	fmt.Fprintf(tw, "INDEX\t%d\nTREE SIZE\t%d\nROOT\t%s\nENTRY\t%s, %s\n", p.Index, c.Size, c.Hash, e.Kind, e.Time.Format("2006-01-02T15:04:05Z"))
	if *certFile != "" {
		fmt.Fprintf(tw, "CERTIFICATE\tthe entry is the issuance of %s\n", *certFile)
	}
	tw.Flush()
	return 0
}

// logKey is the log's verifier key given as -key (the key, or @FILE to
// read it from FILE), read by parse (transparency.ParseVerifierKey; a
// parameter, so that this package need not import the note package).
func logKey[V any](key string, parse func(string) (V, error)) (V, error) {
	var none V
	if key == "" {
		return none, errors.New("give -key, the log's verifier key")
	}
	if f, ok := strings.CutPrefix(key, "@"); ok {
		b, err := os.ReadFile(f)
		if err != nil {
			return none, fmt.Errorf("-key: %w", err)
		}
		key = string(b)
	}
	v, err := parse(key)
	if err != nil {
		return none, fmt.Errorf("-key: %w", err)
	}
	return v, nil
}

// readProof reads a proof file: one InclusionProof in JSON, no other
// member.
func readProof(file string) (transparency.InclusionProof, error) {
	var p transparency.InclusionProof
	b, err := os.ReadFile(file)
	if err != nil {
		return p, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("%s is not an inclusion proof: %w", file, err)
	}
	if len(p.Entry) == 0 || len(p.Checkpoint) == 0 {
		return p, fmt.Errorf("%s is not an inclusion proof: no entry or no checkpoint", file)
	}
	return p, nil
}

// readCertFile reads a certificate: its first PEM CERTIFICATE block, or
// the file as DER.
func readCertFile(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-cert: %w", err)
	}
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		switch {
		case blk == nil && bytes.Contains(b, []byte("-----BEGIN")):
			return nil, fmt.Errorf("-cert: %s holds no CERTIFICATE block", file)
		case blk == nil:
			return b, nil
		case blk.Type == "CERTIFICATE":
			return blk.Bytes, nil
		}
	}
}
