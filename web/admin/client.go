// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client is a Go client of the admin API: the weir CLI's operator
// commands (ratelimit, accounts, certs, crl, eab, tenant, admin token)
// ask a running server through it. The server holds the limiter backend
// and the caches, so asking it is the one way that is right for every
// backend and never races the server's own writes.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the admin API at base (its URL without
// /api/v1), sending token as the bearer token unless it is empty. An
// https base is verified against roots (nil: the system's).
func NewClient(base, token string, roots *x509.CertPool) *Client {
	base = strings.TrimSuffix(base, "/")
	tr := &http.Transport{}
	if strings.HasPrefix(base, "https://") {
		tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return &Client{base: base, token: token, http: &http.Client{Timeout: 30 * time.Second, Transport: tr}}
}

// Do sends a request with body (unless nil) as JSON and decodes the JSON
// answer into out (unless nil; a *[]byte takes the body as it is). An
// answer other than 2xx becomes an error carrying the API's message
// ({"error": "..."}) and the status.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
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

// Get is Do with GET and the query parameters q (empty values dropped).
func (c *Client) Get(ctx context.Context, path string, q url.Values, out any) error {
	for k, v := range q {
		if len(v) == 0 || v[0] == "" {
			delete(q, k)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return c.Do(ctx, http.MethodGet, path, nil, out)
}
