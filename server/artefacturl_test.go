// SPDX-License-Identifier: Apache-2.0

package server

import "testing"

// TestArtefactURL: the base URL the certificates name for their CRL and
// issuer: server.http.external-url, else http:// with the host of
// server.external-url (else of the listener) and the listener's port
// (none for 80); the ACME listener's with the plain-HTTP listener off.
func TestArtefactURL(t *testing.T) {
	for _, tc := range []struct {
		listen, external, httpListen, httpExternal, want string
	}{
		{"localhost:14000", "", "localhost:14080", "", "http://localhost:14080"},
		{"0.0.0.0:443", "https://acme.example.internal", "0.0.0.0:80", "", "http://acme.example.internal"},
		{"0.0.0.0:14000", "https://acme.example.internal:14000/", "0.0.0.0:14080", "", "http://acme.example.internal:14080"},
		{"[::1]:14000", "", "[::1]:14080", "", "http://[::1]:14080"},
		{"[::1]:14000", "", "[::1]:80", "", "http://[::1]"},
		{"localhost:14000", "https://acme.example.internal", "localhost:14080", "http://crl.example.internal/", "http://crl.example.internal"},
		{"localhost:14000", "", "", "", "https://localhost:14000"},
		{"localhost:14000", "https://acme.example.internal", "", "", "https://acme.example.internal"},
	} {
		cfg := DefaultConfig()
		cfg.Server.Listen, cfg.Server.ExternalURL = tc.listen, tc.external
		cfg.Server.HTTP = PublicHTTPConfig{Listen: tc.httpListen, ExternalURL: tc.httpExternal}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", tc, err)
			continue
		}
		if got := ArtefactURL(cfg); got != tc.want {
			t.Errorf("%+v: ArtefactURL = %s, want %s", tc, got, tc.want)
		}
	}
}
