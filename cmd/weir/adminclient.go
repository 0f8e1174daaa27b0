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
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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

// client builds the admin API client the flags describe.
func (f *adminFlags) client() (*adminClient, error) {
	cfg, err := server.LoadConfig(*f.config)
	if err != nil {
		return nil, err
	}
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return nil, err
	}
	c := &adminClient{base: strings.TrimSuffix(*f.adminURL, "/")}
	if c.base == "" {
		if !cfg.Admin.On() {
			return nil, errors.New("the admin listener is disabled in the configuration (admin.enabled: false); pass -admin URL")
		}
		c.base = server.AdminURL(cfg)
	}
	switch tokenFile := server.AdminTokenFile(cfg); {
	case *f.tokenFile != "":
		b, err := os.ReadFile(*f.tokenFile)
		if err != nil {
			return nil, err
		}
		c.token = strings.TrimSpace(string(b))
	case os.Getenv("WEIR_ADMIN_TOKEN") != "":
		c.token = os.Getenv("WEIR_ADMIN_TOKEN")
	case tokenFile != "":
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading the admin token: %w (is this the server's -config, and may you read its data directory?)", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	tr := &http.Transport{}
	if strings.HasPrefix(c.base, "https://") {
		tr.TLSClientConfig = &tls.Config{RootCAs: server.ClientRoots(cfg), MinVersion: tls.VersionTLS12}
	}
	c.http = &http.Client{Timeout: 30 * time.Second, Transport: tr}
	return c, nil
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

// parseInterspersed parses fs over args, allowing flags after positional
// arguments ("certs revoke SERIAL --reason keyCompromise"), and returns the
// positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
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

// oneArgVerb parses a verb that takes exactly one positional argument and
// builds its admin client. On a usage or client error it reports it and
// returns a nil client and the exit code.
func oneArgVerb(fs *flag.FlagSet, af *adminFlags, args []string, stderr io.Writer) ([]string, *adminClient, int) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, nil, 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return nil, nil, 2
	}
	c, err := af.client()
	if err != nil {
		return nil, nil, fail(stderr, fs.Name(), err)
	}
	return pos, c, 0
}
