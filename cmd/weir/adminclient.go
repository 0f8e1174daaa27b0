// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/weir-pki/weir/server"
)

// The operator commands (ratelimit, accounts, certs, crl) are clients of a
// running server's admin API: the server holds the limiter backend (SQLite
// or Redis) and the caches, so asking it is the one way that is right for
// every backend and never races the server's own writes.

// adminClient talks to the admin API.
type adminClient struct {
	base  string
	token string
	http  *http.Client
}

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
func (f *adminFlags) client(stderr io.Writer) (*adminClient, error) {
	t, err := server.FindAdmin(*f.config)
	if err != nil {
		return nil, err
	}
	c := &adminClient{base: strings.TrimSuffix(*f.adminURL, "/")}
	if t.ConfigErr != nil {
		fmt.Fprintf(stderr, "weir: warning: the configuration does not load: %v\n", firstLine(t.ConfigErr))
	}
	if c.base == "" {
		switch {
		case t.ConfigErr != nil && t.URL == "":
			return nil, fmt.Errorf("no admin address: the configuration does not load and %s does not exist (weir serve writes it); pass -admin URL", t.URLFile)
		case t.ConfigErr != nil:
			fmt.Fprintf(stderr, "weir: using the admin address weir serve recorded in %s: %s\n", t.URLFile, t.URL)
		case t.URL == "":
			return nil, errors.New("the admin listener is disabled in the configuration (admin.enabled: false); pass -admin URL")
		}
		c.base = t.URL
	}
	var err2 error
	switch {
	case *f.tokenFile != "":
		c.token, err2 = readTokenFile(*f.tokenFile, "-token-file")
	case os.Getenv("WEIR_ADMIN_TOKEN") != "":
		c.token, err2 = checkToken(os.Getenv("WEIR_ADMIN_TOKEN"), "WEIR_ADMIN_TOKEN")
	case t.TokenFile != "":
		c.token, err2 = readTokenFile(t.TokenFile, "admin.token-file")
		if errors.Is(err2, fs.ErrNotExist) || errors.Is(err2, fs.ErrPermission) {
			err2 = fmt.Errorf("%w (is this the server's -config, and may you read its data directory?)", err2)
		}
	}
	if err2 != nil {
		return nil, err2
	}
	tr := &http.Transport{}
	if strings.HasPrefix(c.base, "https://") {
		tr.TLSClientConfig = &tls.Config{RootCAs: server.ClientRoots(t.Config), MinVersion: tls.VersionTLS12}
	}
	c.http = &http.Client{Timeout: 30 * time.Second, Transport: tr}
	return c, nil
}

// firstLine is the first line of an error, with a count of the others.
func firstLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s (and %d more problems; weir check-config lists them)", lines[0], len(lines)-1)
}

// do sends a request and decodes a JSON answer into out (unless nil). A
// non-2xx answer becomes an error carrying the API's message.
func (c *adminClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("the admin API at %s: %w (is weir serve running?)", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return fmt.Errorf("the admin API answered HTTP %d", resp.StatusCode)
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding the admin API's answer: %w", err)
		}
	}
	return nil
}

// get is do with GET and query parameters (empty values dropped).
func (c *adminClient) get(ctx context.Context, path string, q url.Values, out any) error {
	for k, v := range q {
		if len(v) == 0 || v[0] == "" {
			delete(q, k)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return c.do(ctx, http.MethodGet, path, nil, out)
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fmtTime prints a time for tables: RFC 3339 in UTC, with the distance
// from now.
func fmtTime(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	d := t.Sub(now).Round(time.Second)
	switch {
	case d > 0:
		return fmt.Sprintf("%s (in %s)", t.UTC().Format(time.RFC3339), d)
	case d < 0:
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), -d)
	}
	return t.UTC().Format(time.RFC3339) + " (now)"
}
