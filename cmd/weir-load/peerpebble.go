// SPDX-License-Identifier: Apache-2.0

// Pebble (github.com/letsencrypt/pebble) as a peer: its config, its
// start, the root it issues under.

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/internal/weirproc"
)

// pebbleConfig is pebble's -config file (cmd/pebble's config struct; its
// reader, encoding/json, matches the keys without regard to case).
type pebbleConfig struct {
	Pebble pebbleSettings `json:"pebble"`
}

type pebbleSettings struct {
	ListenAddress                  string                   `json:"listenAddress"`
	ManagementListenAddress        string                   `json:"managementListenAddress"`
	Certificate                    string                   `json:"certificate"`
	PrivateKey                     string                   `json:"privateKey"`
	HTTPPort                       int                      `json:"httpPort"`
	TLSPort                        int                      `json:"tlsPort"`
	OCSPResponderURL               string                   `json:"ocspResponderURL"`
	ExternalAccountBindingRequired bool                     `json:"externalAccountBindingRequired"`
	KeyAlgorithm                   string                   `json:"keyAlgorithm"`
	Profiles                       map[string]pebbleProfile `json:"profiles"`
}

type pebbleProfile struct {
	Description    string `json:"description"`
	ValidityPeriod uint64 `json:"validityPeriod"` // seconds
}

// peerLifetime is the peers' certificate lifetime: weir's default
// ca.certificate-lifetime (2160h).
const peerLifetime = 90 * 24 * time.Hour

// pebbleEnv is the environment of a pebble under load: no random sleep
// before a validation, no nonce refused on purpose, valid authorizations
// always reused (each name is new: none is), real validations.
var pebbleEnv = []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=100", "PEBBLE_VA_ALWAYS_VALID=0"}

// newPebbleConfig is the config of a pebble on listen (ACME) and mgmt
// (management interface), with the TLS certificate and key of both at
// certPath and keyPath, validating http-01 on httpPort (tlsPort for
// tls-alpn-01, unused); ECDSA keys and weir's lifetime, as weir signs.
func newPebbleConfig(listen, mgmt, certPath, keyPath string, httpPort, tlsPort int) pebbleConfig {
	return pebbleConfig{Pebble: pebbleSettings{
		ListenAddress: listen, ManagementListenAddress: mgmt,
		Certificate: certPath, PrivateKey: keyPath,
		HTTPPort: httpPort, TLSPort: tlsPort,
		OCSPResponderURL: "", ExternalAccountBindingRequired: false,
		KeyAlgorithm: "ecdsa",
		Profiles: map[string]pebbleProfile{
			"default": {Description: "weir-load", ValidityPeriod: uint64(peerLifetime / time.Second)},
		},
	}}
}

// startPebble writes the listener's certificate (a throwaway root and a
// leaf for 127.0.0.1) and the config into dir, starts pebble with its
// DNS on the tool's server and waits for its directory; then it adds
// the root pebble made at start (from the management interface) to the
// roots, to verify the chains it issues.
func startPebble(ctx context.Context, ps *peerServer, dir string, so serverOptions) (*weirproc.Proc, error) {
	root, err := newCA("weir-load pebble listener root", nil)
	if err != nil {
		return nil, err
	}
	leaf, err := newTLSLeaf(root)
	if err != nil {
		return nil, err
	}
	certPath, keyPath := filepath.Join(dir, "listener-cert.pem"), filepath.Join(dir, "listener-key.pem")
	if err := leaf.writeCert(certPath); err != nil {
		return nil, err
	}
	if err := leaf.writeKey(keyPath, nil); err != nil {
		return nil, err
	}
	addrs, err := weirproc.FreeAddrs(3) // ACME, management, tls-alpn-01
	if err != nil {
		return nil, err
	}
	_, tlsPort, _ := net.SplitHostPort(addrs[2])
	tp, _ := strconv.Atoi(tlsPort)
	cfg, err := json.MarshalIndent(newPebbleConfig(addrs[0], addrs[1], certPath, keyPath, so.httpPort, tp), "", "  ")
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "pebble-config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	proc, err := weirproc.StartCommand(ctx, weirproc.CommandOptions{
		Bin: ps.spec.bin, Args: []string{"-config", cfgPath, "-dnsserver", so.dnsAddr},
		Env: append(append([]string{}, peerEnv...), pebbleEnv...),
		Dir: dir, Listen: addrs[0], Roots: roots, ReadyPath: "/dir",
	})
	if err != nil {
		return nil, err
	}
	issuing, err := fetchCert(ctx, roots, "https://"+addrs[1]+"/roots/0")
	if err != nil {
		return proc, fmt.Errorf("pebble's root: %w", err)
	}
	proc.Roots.AddCert(issuing)
	ps.dirURL = proc.Base + "/dir"
	ps.storage = "memory (pebble: no durability)"
	ps.wrap = func(rt http.RoundTripper) http.RoundTripper { return pebbleOrderLocation{rt} }
	return proc, nil
}

// pebbleOrderLocation gives pebble's finalize responses the Location of
// their order. x/crypto/acme's CreateOrderCert polls the order at the
// finalize response's Location when the order is not valid yet
// (golang/go#77704); pebble finalizes asynchronously, answers
// "processing" and sends no Location (RFC 8555 does not ask for one), so
// the poll would POST to "". Its order of /finalize-order/ID is
// /my-order/ID.
type pebbleOrderLocation struct{ rt http.RoundTripper }

func (t pebbleOrderLocation) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.rt.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || res.Header.Get("Location") != "" {
		return res, err
	}
	if id, ok := strings.CutPrefix(req.URL.Path, "/finalize-order/"); ok {
		u := *req.URL
		u.Path, u.RawPath = "/my-order/"+id, ""
		res.Header.Set("Location", u.String())
	}
	return res, nil
}

// fetchCert GETs a PEM certificate over HTTPS, trying for 10 s at most
// (pebble starts its management listener on its own).
func fetchCert(ctx context.Context, roots *x509.CertPool, url string) (*x509.Certificate, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	}}
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cert, err := getCert(ctx, c, url)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return cert, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func getCert(ctx context.Context, c *http.Client, url string) (*x509.Certificate, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, res.Status)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", url)
	}
	return x509.ParseCertificate(block.Bytes)
}
