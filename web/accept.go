// SPDX-License-Identifier: Apache-2.0

package web

import (
	"mime"
	"strconv"
	"strings"
)

// The formats of the certificate resources (RFC 8555 §7.4.2).
const (
	mediaPEMChain = "application/pem-certificate-chain"
	mediaPKIXCert = "application/pkix-cert" // one DER certificate (RFC 2585)
)

// certFormat picks the format of a certificate resource from an Accept
// header: the PEM chain, the default, when the header is absent or admits
// it; one DER certificate when the header admits only that; "" when it
// admits neither. A media range with q=0 is refused (RFC 9110 §12.5.1).
func certFormat(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return mediaPEMChain
	}
	der := false
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if v, err := strconv.ParseFloat(q, 64); err != nil || v <= 0 {
				continue
			}
		}
		switch mt {
		case mediaPEMChain, "*/*", "application/*":
			return mediaPEMChain
		case mediaPKIXCert:
			der = true
		}
	}
	if der {
		return mediaPKIXCert
	}
	return ""
}
