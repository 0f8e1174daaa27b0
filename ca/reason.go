// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"fmt"
	"slices"
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

// SubscriberReasons are the reason codes a subscriber may give when it
// revokes its own certificate (through ACME revokeCert, RFC 8555 §7.6), in
// the order of their codes. They are the CA/Browser Forum Baseline
// Requirements' (§4.9.1.1, §7.2.2): cACompromise, privilegeWithdrawn and
// aACompromise state what only the CA can know, and certificateHold is
// refused because a hold can never be lifted here (removeFromCRL is not
// accepted and a revocation is permanent); 7 is unused.
var SubscriberReasons = []int{ReasonUnspecified, ReasonKeyCompromise, ReasonAffiliationChanged, ReasonSuperseded, ReasonCessationOfOperation}

// SubscriberReason reports whether a subscriber may revoke with code (one
// of SubscriberReasons).
func SubscriberReason(code int) bool {
	return slices.Contains(SubscriberReasons, code)
}

// OperatorReason reports whether an operator may revoke with code: any RFC
// 5280 reason but certificateHold (a hold can never be lifted: every
// revocation is permanent) and removeFromCRL (which only lifts a hold). An
// operator is the CA, so it may also state cACompromise, privilegeWithdrawn
// and aACompromise.
func OperatorReason(code int) bool {
	return ValidReason(code) && code != ReasonCertificateHold && code != ReasonRemoveFromCRL
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
