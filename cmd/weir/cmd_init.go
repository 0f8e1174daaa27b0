// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/server"
)

// cmdInit writes a commented configuration file and prepares the data
// directory (CA, weir's HTTPS certificate, admin token) without serving.
func cmdInit(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("init", "init [-config FILE] [-data-dir DIR] [-force] [-print-config] [-keep-config] [-root-key-out FILE]",
		"Writes a commented configuration file and creates the data directory: the CA\n"+
			"(root and intermediate), weir's HTTPS certificate and the admin token. It\n"+
			"never replaces a CA, certificate or token that is already there. With\n"+
			"-keep-config it reads the existing file instead and creates the data\n"+
			"directory that file names (what the Debian package runs on first install).", stderr)
	configPath := fs.String("config", "weir.yaml", "the configuration `file` to write")
	dataDir := fs.String("data-dir", server.DefaultConfig().DataDir, "the data `directory` the configuration names and init creates")
	force := fs.Bool("force", false, "overwrite an existing configuration file (the data directory's contents are kept)")
	rootKeyOut := fs.String("root-key-out", "", "write a new root CA's key to this `file` outside the data directory (an offline medium) instead of "+
		"the data directory; weir serve never needs it")
	printConfig := fs.Bool("print-config", false, "print the configuration file to standard output and write nothing")
	keepConfig := fs.Bool("keep-config", false, "read the existing configuration file and create the data directory it names (not with -data-dir, -force or -print-config)")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	if msg := initConflict(fs, *keepConfig, *printConfig); msg != "" {
		return usageError(fs, stderr, msg)
	}
	opts := server.InitOptions{RootKeyOut: *rootKeyOut}
	if *keepConfig {
		return initFromConfig(*configPath, opts, stdout, stderr)
	}
	text := server.ConfigText(*configPath, *dataDir)
	cfg, err := server.ParseConfig("", text)
	if err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	if *printConfig {
		_, _ = stdout.Write(text)
		return 0
	}
	rep, err := server.InitWithConfig(*configPath, text, cfg, *force, time.Now(), opts)
	if err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n\n", *configPath)
	rep.Print(stdout)
	if !filepath.IsAbs(*dataDir) {
		fmt.Fprintf(stdout, "\ndata-dir %s is relative: weir resolves it against the directory it runs in.\n", *dataDir)
	}
	fmt.Fprintf(stdout, "\nCheck it and start weir:\n\n  weir check-config %s\n  weir serve -config %s\n", *configPath, *configPath)
	return 0
}

// initConflict names a flag set on the command line that the mode asked
// for (-keep-config, -print-config) cannot apply, or returns "": such a
// flag is a usage error rather than silently ignored.
func initConflict(fs *cmdFlags, keepConfig, printConfig bool) string {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, m := range []struct {
		on      bool
		mode    string
		ignores []string
		why     string
	}{
		{keepConfig, "keep-config", []string{"data-dir", "force", "print-config"},
			"it reads the configuration file as it is and creates the data directory that file names"},
		{printConfig, "print-config", []string{"force", "root-key-out"},
			"it prints the configuration and writes nothing"},
	} {
		if !m.on {
			continue
		}
		for _, f := range m.ignores {
			if set[f] {
				return fmt.Sprintf("-%s does not apply with -%s: %s", f, m.mode, m.why)
			}
		}
	}
	return ""
}

// initFromConfig creates the data directory the configuration file at path
// names, leaving the file as it is.
func initFromConfig(path string, opts server.InitOptions, stdout, stderr io.Writer) int {
	cfg, err := server.LoadConfig(path)
	if err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	rep, err := server.InitDataDir(cfg, time.Now(), opts)
	if err != nil {
		fmt.Fprintf(stderr, "weir init: %v\n", err)
		return 1
	}
	rep.Print(stdout)
	return 0
}
