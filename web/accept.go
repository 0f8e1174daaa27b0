package web

import (
	"mime"
	"strings"
)

// acceptsPEMChain reports whether an Accept header admits
// application/pem-certificate-chain (RFC 8555 §7.4.2).
func acceptsPEMChain(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/pem-certificate-chain", "*/*", "application/*":
			return true
		}
	}
	return false
}
