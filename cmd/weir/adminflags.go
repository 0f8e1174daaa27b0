// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// The operator commands (ratelimit, accounts, certs, crl, eab, tenant,
// admin) are clients of a running server's admin API (admin.Client).

// adminFlags are the flags every operator command takes.
type adminFlags struct {
	config    *string
	adminURL  *string
	tokenFile *string
	json      *bool
}

func addAdminFlags(fs *flag.FlagSet) *adminFlags {
	return &adminFlags{
		config:    fs.String("config", "", "the server's configuration `file`: where its admin listener and token are (default: embedded defaults)"),
		adminURL:  fs.String("admin", "", "the admin API's base `URL` (default: from the configuration)"),
		tokenFile: fs.String("token-file", "", "read the admin token from this `file` (default: admin.token-file; or set WEIR_ADMIN_TOKEN)"),
		json:      fs.Bool("json", false, "print JSON instead of a table"),
	}
}

// client builds the admin API client the flags describe. When the
// configuration file does not load, it says so on stderr and goes on with
// -admin, or else with the admin address the running weir recorded
// (server.FindAdmin): the server keeps running on its last good
// configuration, and that is when an operator needs these commands.
func (f *adminFlags) client(stderr io.Writer) (*admin.Client, error) {
	t, err := server.FindAdmin(*f.config)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(*f.adminURL, "/")
	if t.ConfigErr != nil {
		fmt.Fprintf(stderr, "weir: warning: the configuration does not load: %v\n", firstLine(t.ConfigErr))
	}
	if base == "" {
		switch {
		case t.ConfigErr != nil && t.URL == "":
			return nil, fmt.Errorf("no admin address: the configuration does not load and %s does not exist (weir serve writes it); pass -admin URL", t.URLFile)
		case t.ConfigErr != nil:
			fmt.Fprintf(stderr, "weir: using the admin address weir serve recorded in %s: %s\n", t.URLFile, t.URL)
		case t.URL == "":
			return nil, errors.New("the admin listener is disabled in the configuration (admin.enabled: false); pass -admin URL")
		}
		base = t.URL
	}
	var token string
	switch {
	case *f.tokenFile != "":
		token, err = admin.ReadTokenFile(*f.tokenFile, "-token-file")
	case os.Getenv("WEIR_ADMIN_TOKEN") != "":
		token, err = admin.CheckToken(os.Getenv("WEIR_ADMIN_TOKEN"), "WEIR_ADMIN_TOKEN")
	case t.TokenFile != "":
		token, err = admin.ReadTokenFile(t.TokenFile, "admin.token-file")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			err = fmt.Errorf("%w (is this the server's -config, and may you read its data directory?)", err)
		}
	}
	if err != nil {
		return nil, err
	}
	var roots *x509.CertPool
	if strings.HasPrefix(base, "https://") {
		roots = server.ClientRoots(t.Config)
	}
	return admin.NewClient(base, token, roots), nil
}

// firstLine is the first line of an error, with a count of the others.
func firstLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s (and %d more problems; weir check-config lists them)", lines[0], len(lines)-1)
}
