package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/web"
)

// cmdInit writes a commented configuration file and prepares the data
// directory (CA, weir's HTTPS certificate, admin token) without serving.
func cmdInit(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: weir init [-config FILE] [-data-dir DIR] [-force] [-print-config]\n\n"+
			"Writes a commented configuration file and creates the data directory: the CA\n"+
			"(root and intermediate), weir's HTTPS certificate and the admin token. It\n"+
			"never replaces a CA, certificate or token that is already there.\n\n")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "weir.yaml", "the configuration `file` to write")
	dataDir := fs.String("data-dir", defaultConfig().DataDir, "the data `directory` the configuration names and init creates")
	force := fs.Bool("force", false, "overwrite an existing configuration file (the data directory's contents are kept)")
	printConfig := fs.Bool("print-config", false, "print the configuration file to standard output and write nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "weir init: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	text := configText(*configPath, *dataDir)
	cfg, err := parseConfig(text)
	if err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	if *printConfig {
		_, _ = stdout.Write(text)
		return 0
	}
	if exists(*configPath) && !*force {
		fmt.Fprintf(stderr, "weir init: %s exists; use -force to overwrite it, or -config to write another file\n", *configPath)
		return 1
	}
	rep, err := initDataDir(cfg, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	// The config's directory is readable by all, like /etc/weir: the
	// service may run as another user than the one running init.
	if err := os.MkdirAll(filepath.Dir(*configPath), 0o755); err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	if err := writeFileAtomic(*configPath, text, 0o644); err != nil {
		fmt.Fprintf(stderr, "weir init: writing %s: %v\n", *configPath, err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n\n", *configPath)
	rep.print(stdout)
	if !filepath.IsAbs(*dataDir) {
		fmt.Fprintf(stdout, "\ndata-dir %s is relative: weir resolves it against the directory it runs in.\n", *dataDir)
	}
	fmt.Fprintf(stdout, "\nCheck it and start weir:\n\n  weir check-config %s\n  weir serve -config %s\n", *configPath, *configPath)
	return 0
}

// initFile is one file init makes or finds in the data directory.
type initFile struct {
	name, what string
	outcome    string // created, kept or replaced
	secret     bool
}

// initReport says what init did in the data directory.
type initReport struct {
	dataDir string
	files   []initFile
	rootFP  string
}

// initDataDir makes the data directory of cfg ready to serve: the CA, the
// HTTPS certificate and the admin token, reusing whatever is there.
func initDataDir(cfg Config, now time.Time) (*initReport, error) {
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dd
	files := []initFile{
		{name: fileRootPEM, what: "the root certificate to distribute"},
		{name: fileCARoot, what: "the root CA"},
		{name: fileCARootKey, what: "the root CA's key", secret: true},
		{name: fileCAIntermediate, what: "the issuing intermediate CA"},
		{name: fileCAIntKey, what: "the intermediate's key", secret: true},
		{name: fileTLSCert, what: "weir's HTTPS certificate"},
		{name: fileTLSKey, what: "its key", secret: true},
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = dataPath(dd, f.name)
	}
	if adminTokenWanted(cfg) {
		files = append(files, initFile{name: cfg.Admin.TokenFile, what: "the admin listener's bearer token", secret: true})
		paths = append(paths, adminTokenPath(cfg))
	}
	before := make([][]byte, len(paths))
	for i, p := range paths {
		before[i], _ = os.ReadFile(p)
	}

	if err := os.MkdirAll(dd, 0o700); err != nil {
		return nil, fmt.Errorf("data-dir: %w", err)
	}
	h, _, err := loadOrCreateHierarchy(cfg, now)
	if err != nil {
		return nil, fmt.Errorf("ca: %w", err)
	}
	issuer, err := newIssuer(cfg, h)
	if err != nil {
		return nil, err
	}
	if _, err := serverCertificate(cfg, issuer, now); err != nil {
		return nil, fmt.Errorf("server.tls: %w", err)
	}
	if _, err := loadOrCreateAdminToken(cfg); err != nil {
		return nil, err
	}

	rep := &initReport{dataDir: dd}
	if h.Root != nil {
		rep.rootFP = fingerprint(h.Root)
	}
	for i, f := range files {
		after, err := os.ReadFile(paths[i])
		switch {
		case err != nil:
			continue // not ours to make: a configured intermediate, say
		case before[i] == nil:
			f.outcome = "created"
		case bytes.Equal(before[i], after):
			f.outcome = "kept"
		default:
			f.outcome = "replaced"
		}
		rep.files = append(rep.files, f)
	}
	return rep, nil
}

// print lists the data directory's files.
func (r *initReport) print(w io.Writer) {
	fmt.Fprintf(w, "data directory %s:\n", r.dataDir)
	for _, f := range r.files {
		what := f.what
		if f.secret {
			what += " (mode 0600)"
		}
		fmt.Fprintf(w, "  %-8s %-26s %s\n", f.outcome, f.name, what)
	}
	if r.rootFP != "" {
		fmt.Fprintf(w, "\nroot CA SHA-256: %s\n", r.rootFP)
	}
}

// externalURL is the base URL clients use: server.external-url, or
// https://<server.listen>.
func externalURL(cfg Config) string {
	if cfg.Server.ExternalURL != "" {
		return cfg.Server.ExternalURL
	}
	return "https://" + cfg.Server.Listen
}

// newIssuer is the CA that signs with h, as weir serve makes it.
func newIssuer(cfg Config, h *ca.Hierarchy) (*ca.CA, error) {
	base := externalURL(cfg)
	return ca.New(ca.Config{
		Lifetime: cfg.CA.CertificateLifetime, IssuerURL: web.IntermediateURL(base), CRLURL: web.CRLURL(base),
		KeyPolicy: ca.KeyPolicy{AllowEd25519: cfg.CA.AllowEd25519},
	}, h, nil)
}
