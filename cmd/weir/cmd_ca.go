// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weir-pki/weir/server"
)

// cmdCA runs the CA's ceremonies, which work on files and tokens, not
// on the running weir: take the root offline, make a new intermediate's
// key and CSR, sign it with the offline root, import it; sign the root's
// CRL, revoking intermediates. And migration-status, which asks the
// running weir's admin API how a rotation goes (cmd_camigration.go).
func cmdCA(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"take-root-offline":    {"take-root-offline [-config FILE] -to FILE", caTakeRootOffline},
		"new-intermediate-key": {"new-intermediate-key -name CN [-org O] -key-out FILE -csr-out FILE [-passphrase-file F]", caNewIntermediateKey},
		"sign-intermediate":    {"sign-intermediate -root-cert FILE -csr FILE -out FILE -root-key FILE [-root-key-type T] [-crl-url URL] [...]", caSignIntermediate},
		"sign-root-crl":        {"sign-root-crl -root-cert FILE -out FILE -root-key FILE [-revoke FILE -reason R]... [-next-update D] [...]", caSignRootCRL},
		"import":               {"import [-config FILE] -cert FILE [-key FILE]", caImport},
		"add-issuer":           {"add-issuer [-config FILE] -id ID -cert FILE [-key FILE]", caAddIssuer},
		"migration-status":     {"migration-status [--json]", caMigrationStatus},
	}
	return runGroup(ctx, "ca", verbs, []string{"take-root-offline", "new-intermediate-key", "sign-intermediate", "sign-root-crl", "import", "add-issuer",
		"migration-status"}, args, stdout, stderr)
}

// rootKeyFlags adds the flags that say where the root's key is, for the
// ceremonies that sign with it; apply completes rk once they are parsed.
func rootKeyFlags(fs *cmdFlags) (rk *server.RootKey, apply func()) {
	rk = &server.RootKey{}
	var slot int
	fs.StringVar(&rk.KeyFile, "root-key", "", "the root's key `file` (types file and encrypted-file)")
	fs.StringVar(&rk.Signer.Type, "root-key-type", "file", "where the root key is: file, encrypted-file or pkcs11")
	fs.StringVar(&rk.Signer.Passphrase.File, "passphrase-file", "", "encrypted-file: the passphrase's `file`")
	fs.StringVar(&rk.Signer.Passphrase.Env, "passphrase-env", "", "encrypted-file: the passphrase's environment `variable`")
	fs.StringVar(&rk.Signer.PKCS11.Module, "pkcs11-module", "", "pkcs11: the PKCS#11 library's `path`")
	fs.StringVar(&rk.Signer.PKCS11.TokenLabel, "pkcs11-token", "", "pkcs11: the token's `label`")
	fs.IntVar(&slot, "pkcs11-slot", -1, "pkcs11: the token's `slot` (instead of -pkcs11-token)")
	fs.StringVar(&rk.Signer.PKCS11.KeyLabel, "pkcs11-key-label", "", "pkcs11: the key's `label`")
	fs.StringVar(&rk.Signer.PKCS11.KeyID, "pkcs11-key-id", "", "pkcs11: the key's `id` (hex)")
	fs.StringVar(&rk.Signer.PKCS11.PIN.File, "pin-file", "", "pkcs11: the PIN's `file`")
	fs.StringVar(&rk.Signer.PKCS11.PIN.Env, "pin-env", "", "pkcs11: the PIN's environment `variable`")
	return rk, func() {
		if slot >= 0 {
			rk.Signer.PKCS11.Slot = &slot
		}
	}
}

// caFlags is a ceremony's flag set.
func caFlags(name, synopsis, about string, stderr io.Writer) *cmdFlags {
	return newFlagSet("ca "+name, "ca "+name+" "+synopsis, about, stderr)
}

// caArgs parses a ceremony's flags; an argument, or a required flag (by
// name) left empty, is a usage error.
func caArgs(fs *cmdFlags, args []string, stdout, stderr io.Writer, required map[string]*string) (int, bool) {
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code, false
	}
	for _, name := range []string{"to", "name", "key-out", "csr-out", "root-cert", "csr", "out", "cert"} {
		if v, ok := required[name]; ok && *v == "" {
			return usageError(fs, stderr, "-"+name+" is required"), false
		}
	}
	return 0, true
}

func caTakeRootOffline(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := caFlags("take-root-offline", "[-config FILE] -to FILE",
		"Moves the data directory's root key to FILE, outside it (an offline medium);\n"+
			"weir serve never needs it. Keep it for weir ca sign-intermediate.", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	to := fs.String("to", "", "where to move the root key, outside the data directory (an offline medium)")
	if code, ok := caArgs(fs, args, stdout, stderr, map[string]*string{"to": to}); !ok {
		return code
	}
	cfg, err := server.LoadConfig(*configPath)
	if err == nil {
		err = server.TakeRootOffline(cfg, *to)
	}
	if err != nil {
		return fail(stderr, "ca take-root-offline", err)
	}
	fmt.Fprintf(stdout, "moved the root key to %s; weir serve does not need it. Keep it offline for weir ca sign-intermediate.\n", *to)
	return 0
}

func caNewIntermediateKey(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := caFlags("new-intermediate-key", "-name CN [-org O] -key-out FILE -csr-out FILE [-passphrase-file F]",
		"Makes a new intermediate's key (encrypted with -passphrase-file) and its CSR,\n"+
			"for weir ca sign-intermediate where the root key is.", stderr)
	name := fs.String("name", "", "the new intermediate's common name")
	org := fs.String("org", "", "its organisation")
	keyOut := fs.String("key-out", "", "the key `file` to write (mode 0600; never over a file)")
	csrOut := fs.String("csr-out", "", "the CSR `file` to write")
	passFile := fs.String("passphrase-file", "", "encrypt the key (PKCS#8, for the encrypted-file signer) with the passphrase in this `file`")
	if code, ok := caArgs(fs, args, stdout, stderr, map[string]*string{"name": name, "key-out": keyOut, "csr-out": csrOut}); !ok {
		return code
	}
	csr, err := server.NewIntermediateKey(*name, *org, *keyOut, *passFile)
	if err == nil {
		err = os.WriteFile(*csrOut, csr, 0o644)
	}
	if err != nil {
		return fail(stderr, "ca new-intermediate-key", err)
	}
	fmt.Fprintf(stdout, "wrote the key %s and the CSR %s; sign it with weir ca sign-intermediate where the root key is\n", *keyOut, *csrOut)
	return 0
}

func caSignIntermediate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := caFlags("sign-intermediate", "-root-cert FILE -csr FILE -out FILE -root-key FILE [-root-key-type T] [-crl-url URL] [...]",
		"Signs a new intermediate's CSR with the offline root (a key file, an\n"+
			"encrypted key file or a PKCS#11 token) and writes the intermediate, then\n"+
			"the root, for weir ca import. The intermediate names the root's CRL\n"+
			"(weir ca sign-root-crl) as its CRL distribution point: -crl-url, else\n"+
			"where weir serves it under -config.", stderr)
	rootCert := fs.String("root-cert", "", "the root's certificate `file` (the data directory's ca/root.pem)")
	csrFile := fs.String("csr", "", "the new intermediate's CSR `file`")
	out := fs.String("out", "", "the `file` to write: the new intermediate, then the root")
	configPath := fs.String("config", "", "the server's configuration `file`, for the root CRL's URL (default: embedded defaults)")
	crlURL := fs.String("crl-url", "", "the root CRL's `URL` to name (default: weir's /ca/root-crl.der on its plain-HTTP listener, per -config)")
	rk, applyRootKey := rootKeyFlags(fs)
	if code, ok := caArgs(fs, args, stdout, stderr, map[string]*string{"root-cert": rootCert, "csr": csrFile, "out": out}); !ok {
		return code
	}
	applyRootKey()
	csr, err := os.ReadFile(*csrFile)
	if err != nil {
		return fail(stderr, "ca sign-intermediate", err)
	}
	if *crlURL == "" {
		cfg, err := server.LoadConfig(*configPath)
		if err != nil {
			return fail(stderr, "ca sign-intermediate", err)
		}
		*crlURL = server.RootCRLURL(cfg)
	}
	chain, err := server.SignIntermediateCSR(*rootCert, *rk, csr, time.Now(), *crlURL)
	if err == nil {
		err = os.WriteFile(*out, chain, 0o644)
	}
	if err != nil {
		return fail(stderr, "ca sign-intermediate", err)
	}
	fmt.Fprintf(stdout, "wrote the new intermediate to %s (its CRL, the root's: %s); import it with weir ca import -cert %s\n", *out, *crlURL, *out)
	return 0
}

// fileList is a flag given once per file.
type fileList []string

func (l *fileList) String() string     { return strings.Join(*l, ",") }
func (l *fileList) Set(f string) error { *l = append(*l, f); return nil }

func caSignRootCRL(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := caFlags("sign-root-crl", "-root-cert FILE -out FILE -root-key FILE [-revoke FILE -reason R]... [-next-update D] [...]",
		"Signs the root's next CRL with the offline root (as sign-intermediate), revoking\n"+
			"the intermediates of -revoke, and writes it to -out, a DER file for\n"+
			"ca.root-crl-file (weir serves it at /ca/root-crl.der). -out is the state:\n"+
			"when it exists, the new CRL takes its number plus one and keeps its\n"+
			"entries. Without -revoke it signs the same list anew, as it must be before\n"+
			"its nextUpdate (docs/operations.md, \"Revoking an intermediate\").", stderr)
	rootCert := fs.String("root-cert", "", "the root's certificate `file` (the data directory's ca/root.pem)")
	out := fs.String("out", "", "the root CRL `file`: the previous one, replaced by the new one")
	var revoke fileList
	fs.Var(&revoke, "revoke", "an intermediate's certificate `file` to revoke (repeat for several)")
	reasonName := fs.String("reason", "", "with -revoke: why (keyCompromise, cACompromise, superseded, cessationOfOperation, ...)")
	validity := fs.Duration("next-update", server.DefaultRootCRLValidity, "how long after now relying parties may use it (its nextUpdate)")
	rk, applyRootKey := rootKeyFlags(fs)
	if code, ok := caArgs(fs, args, stdout, stderr, map[string]*string{"root-cert": rootCert, "out": out}); !ok {
		return code
	}
	applyRootKey()
	switch {
	case len(revoke) > 0 && *reasonName == "":
		return usageError(fs, stderr, "-reason is required with -revoke")
	case len(revoke) == 0 && *reasonName != "":
		return usageError(fs, stderr, "-reason goes with -revoke")
	case *validity <= 0:
		return usageError(fs, stderr, "-next-update must be positive")
	}
	signed, err := server.SignRootCRL(*rootCert, *rk, *out, revoke, *reasonName, *validity, time.Now())
	if err != nil {
		return fail(stderr, "ca sign-root-crl", err)
	}
	for _, c := range signed.Added {
		fmt.Fprintf(stdout, "revoked %s (%s)\n", c, *reasonName)
	}
	fmt.Fprintf(stdout, "wrote the root CRL number %s (%d revoked intermediates, next update %s) to %s;\n"+
		"copy it to ca.root-crl-file of every weir (it reloads it) before then\n",
		signed.Number, signed.Listed, signed.NextUpdate.UTC().Format(time.RFC3339), *out)
	return 0
}

func caImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := caFlags("import", "[-config FILE] -cert FILE [-key FILE]",
		"Makes the signed intermediate the data directory's (the one it replaces is\n"+
			"kept beside it); weir serve issues with it from its next start. Refused\n"+
			"while the store holds unexpired certificates of the one it replaces, whose\n"+
			"CRL only that one can sign: rotate with weir ca add-issuer then\n"+
			"(docs/operations.md, \"Rotating the intermediate\").", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	cert := fs.String("cert", "", "the new intermediate's certificate `file` (its chain may follow)")
	key := fs.String("key", "", "its key `file` (none for a pkcs11 signer: the configuration names the token's key)")
	if code, ok := caArgs(fs, args, stdout, stderr, map[string]*string{"cert": cert}); !ok {
		return code
	}
	cfg, err := server.LoadConfig(*configPath)
	if err != nil {
		return fail(stderr, "ca import", err)
	}
	kept, err := server.ImportIntermediate(ctx, cfg, *cert, *key, time.Now())
	if err != nil {
		return fail(stderr, "ca import", err)
	}
	fmt.Fprintf(stdout, "imported the intermediate into %s; restart weir serve to issue with it\n", cfg.DataDir)
	for _, k := range kept {
		fmt.Fprintf(stdout, "  kept the one it replaces as %s\n", k)
	}
	return 0
}

func caAddIssuer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := caFlags("add-issuer", "[-config FILE] -id ID -cert FILE [-key FILE]",
		"Adds the signed intermediate to the data directory as the issuer ID\n"+
			"(ca/issuers/ID), for a rotation: list it in ca.issuers, make it\n"+
			"ca.active-issuer, and restart weir serve (docs/operations.md,\n"+
			"\"Rotating the intermediate\").", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	id := fs.String("id", "", "the new issuer's `id` (lowercase letters, digits, hyphens)")
	cert := fs.String("cert", "", "the new intermediate's certificate `file` (its chain may follow)")
	key := fs.String("key", "", "its key `file` (none for a pkcs11 signer, which its ca.issuers entry names)")
	if code, ok := caArgs(fs, args, stdout, stderr, map[string]*string{"id": id, "cert": cert}); !ok {
		return code
	}
	cfg, err := server.LoadConfig(*configPath)
	if err != nil {
		return fail(stderr, "ca add-issuer", err)
	}
	kept, err := server.AddIssuer(ctx, cfg, *id, *cert, *key, time.Now())
	if err != nil {
		return fail(stderr, "ca add-issuer", err)
	}
	fmt.Fprintf(stdout, "added the issuer %s to %s; list it in ca.issuers (- id: %s), set ca.active-issuer: %s and restart weir serve to issue with it\n",
		*id, cfg.DataDir, *id, *id)
	for _, k := range kept {
		fmt.Fprintf(stdout, "  kept the one it replaces as %s\n", k)
	}
	return 0
}
