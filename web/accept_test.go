// SPDX-License-Identifier: Apache-2.0

package web

import "testing"

func TestCertFormat(t *testing.T) {
	for _, c := range []struct{ accept, want string }{
		{"", mediaPEMChain},
		{"   ", mediaPEMChain},
		{"application/pem-certificate-chain", mediaPEMChain},
		{"application/pem-certificate-chain; charset=utf-8", mediaPEMChain},
		{"*/*", mediaPEMChain},
		{"application/*", mediaPEMChain},
		{"text/html, */*;q=0.1", mediaPEMChain},
		{"application/pkix-cert", mediaPKIXCert},
		{"application/pkix-cert, application/pem-certificate-chain;q=0.5", mediaPEMChain},
		{"application/pkix-cert, */*;q=0", mediaPKIXCert},
		{"application/pem-certificate-chain;q=0", ""},
		{"application/pkix-cert;q=0", ""},
		{"application/pkix-cert;q=zero", ""},
		{"text/html", ""},
		{"application/json, text/plain", ""},
		{";;;, garbage/", ""},
	} {
		if got := certFormat(c.accept); got != c.want {
			t.Errorf("certFormat(%q) = %q, want %q", c.accept, got, c.want)
		}
	}
}
