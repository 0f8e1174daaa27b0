package ca

import (
	"fmt"
	"strconv"
	"strings"
)

// CRL reason codes from RFC 5280 section 5.3.1. Value 7 is unused.
const (
	ReasonUnspecified          = 0
	ReasonKeyCompromise        = 1
	ReasonCACompromise         = 2
	ReasonAffiliationChanged   = 3
	ReasonSuperseded           = 4
	ReasonCessationOfOperation = 5
	ReasonCertificateHold      = 6
	ReasonRemoveFromCRL        = 8
	ReasonPrivilegeWithdrawn   = 9
	ReasonAACompromise         = 10
)

// ValidReason reports whether code is an RFC 5280 reason code: 0 to 10
// except the unused value 7.
func ValidReason(code int) bool {
	return code >= ReasonUnspecified && code <= ReasonAACompromise && code != 7
}

// ReasonString returns the RFC 5280 name of a reason code, such as
// "keyCompromise", or "reason(N)" for an invalid code.
func ReasonString(code int) string {
	switch code {
	case ReasonUnspecified:
		return "unspecified"
	case ReasonKeyCompromise:
		return "keyCompromise"
	case ReasonCACompromise:
		return "cACompromise"
	case ReasonAffiliationChanged:
		return "affiliationChanged"
	case ReasonSuperseded:
		return "superseded"
	case ReasonCessationOfOperation:
		return "cessationOfOperation"
	case ReasonCertificateHold:
		return "certificateHold"
	case ReasonRemoveFromCRL:
		return "removeFromCRL"
	case ReasonPrivilegeWithdrawn:
		return "privilegeWithdrawn"
	case ReasonAACompromise:
		return "aACompromise"
	default:
		return "reason(" + strconv.Itoa(code) + ")"
	}
}

// ReasonFromString parses a reason code given by its RFC 5280 name
// (case-insensitively, e.g. "keyCompromise" or "keycompromise") or as a
// decimal number.
func ReasonFromString(s string) (int, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if !ValidReason(n) {
			return 0, fmt.Errorf("ca: invalid revocation reason code %d", n)
		}
		return n, nil
	}
	for code := ReasonUnspecified; code <= ReasonAACompromise; code++ {
		if ValidReason(code) && strings.EqualFold(s, ReasonString(code)) {
			return code, nil
		}
	}
	return 0, fmt.Errorf("ca: unknown revocation reason %q", s)
}
