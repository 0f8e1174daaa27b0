package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weir-pki/weir/server"
)

// cmdCA runs the CA's ceremonies, which work on files and tokens, not
// on the running weir: take the root offline, make a new intermediate's
// key and CSR, sign it with the offline root, import it.
func cmdCA(_ context.Context, args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprint(stderr, `Usage: weir ca <ceremony> [flags]

  take-root-offline [-config FILE] -to FILE
        move the data directory's root key to FILE, outside it
  new-intermediate-key -name CN [-org O] -key-out FILE -csr-out FILE [-passphrase-file F]
        make a new intermediate's key (encrypted with -passphrase-file) and its CSR
  sign-intermediate -root-cert FILE -csr FILE -out FILE (root key flags)
        sign the CSR with the offline root: the new intermediate, then the root
  import [-config FILE] -cert FILE [-key FILE]
        make it the data directory's intermediate (the old one is kept beside);
        weir serve uses it from its next start

Run "weir ca <ceremony> -h" for the flags of a ceremony.
`)
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	ceremonies := map[string]func([]string, io.Writer, io.Writer) int{
		"take-root-offline": caTakeRootOffline, "new-intermediate-key": caNewIntermediateKey,
		"sign-intermediate": caSignIntermediate, "import": caImport,
	}
	f, ok := ceremonies[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "weir ca: unknown ceremony %q\n\n", args[0])
		usage()
		return 2
	}
	return f(args[1:], stdout, stderr)
}

// caFlags is a ceremony's flag set; parse reports a usage error (2).
func caFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ca "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: weir ca %s %s\n\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// caFail prints a ceremony's error and returns 1.
func caFail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "weir ca %s: %v\n", name, err)
	return 1
}

func caTakeRootOffline(args []string, stdout, stderr io.Writer) int {
	fs := caFlags("take-root-offline", "[-config FILE] -to FILE", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	to := fs.String("to", "", "where to move the root key, outside the data directory (an offline medium)")
	if err := fs.Parse(args); err != nil || *to == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := server.LoadConfig(*configPath)
	if err == nil {
		err = server.TakeRootOffline(cfg, *to)
	}
	if err != nil {
		return caFail(stderr, "take-root-offline", err)
	}
	fmt.Fprintf(stdout, "moved the root key to %s; weir serve does not need it. Keep it offline for weir ca sign-intermediate.\n", *to)
	return 0
}

func caNewIntermediateKey(args []string, stdout, stderr io.Writer) int {
	fs := caFlags("new-intermediate-key", "-name CN [-org O] -key-out FILE -csr-out FILE [-passphrase-file F]", stderr)
	name := fs.String("name", "", "the new intermediate's common name")
	org := fs.String("org", "", "its organisation")
	keyOut := fs.String("key-out", "", "the key `file` to write (mode 0600; never over a file)")
	csrOut := fs.String("csr-out", "", "the CSR `file` to write")
	passFile := fs.String("passphrase-file", "", "encrypt the key (PKCS#8, for the encrypted-file signer) with the passphrase in this `file`")
	if err := fs.Parse(args); err != nil || *name == "" || *keyOut == "" || *csrOut == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	csr, err := server.NewIntermediateKey(*name, *org, *keyOut, *passFile)
	if err == nil {
		err = os.WriteFile(*csrOut, csr, 0o644)
	}
	if err != nil {
		return caFail(stderr, "new-intermediate-key", err)
	}
	fmt.Fprintf(stdout, "wrote the key %s and the CSR %s; sign it with weir ca sign-intermediate where the root key is\n", *keyOut, *csrOut)
	return 0
}

func caSignIntermediate(args []string, stdout, stderr io.Writer) int {
	fs := caFlags("sign-intermediate", "-root-cert FILE -csr FILE -out FILE -root-key FILE [-root-key-type T] [...]", stderr)
	rootCert := fs.String("root-cert", "", "the root's certificate `file` (the data directory's ca/root.pem)")
	csrFile := fs.String("csr", "", "the new intermediate's CSR `file`")
	out := fs.String("out", "", "the `file` to write: the new intermediate, then the root")
	var rk server.RootKey
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
	if err := fs.Parse(args); err != nil || *rootCert == "" || *csrFile == "" || *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if slot >= 0 {
		rk.Signer.PKCS11.Slot = &slot
	}
	csr, err := os.ReadFile(*csrFile)
	if err != nil {
		return caFail(stderr, "sign-intermediate", err)
	}
	chain, err := server.SignIntermediateCSR(*rootCert, rk, csr, time.Now())
	if err == nil {
		err = os.WriteFile(*out, chain, 0o644)
	}
	if err != nil {
		return caFail(stderr, "sign-intermediate", err)
	}
	fmt.Fprintf(stdout, "wrote the new intermediate to %s; import it with weir ca import -cert %s\n", *out, *out)
	return 0
}

func caImport(args []string, stdout, stderr io.Writer) int {
	fs := caFlags("import", "[-config FILE] -cert FILE [-key FILE]", stderr)
	configPath := fs.String("config", "", "the server's configuration `file` (default: embedded defaults)")
	cert := fs.String("cert", "", "the new intermediate's certificate `file` (its chain may follow)")
	key := fs.String("key", "", "its key `file` (none for a pkcs11 signer: the configuration names the token's key)")
	if err := fs.Parse(args); err != nil || *cert == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := server.LoadConfig(*configPath)
	if err != nil {
		return caFail(stderr, "import", err)
	}
	kept, err := server.ImportIntermediate(cfg, *cert, *key, time.Now())
	if err != nil {
		return caFail(stderr, "import", err)
	}
	fmt.Fprintf(stdout, "imported the intermediate into %s; restart weir serve to issue with it\n", cfg.DataDir)
	for _, k := range kept {
		fmt.Fprintf(stdout, "  kept the one it replaces as %s\n", k)
	}
	return 0
}
