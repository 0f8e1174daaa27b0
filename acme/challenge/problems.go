// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/weir-pki/weir/acme"
)

// dnsProblem describes a failed lookup of qtype records for name.
func dnsProblem(qtype, name string, err error) *acme.Problem {
	reason := err.Error()
	var de *net.DNSError
	switch {
	case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		reason = "timeout"
	case errors.As(err, &de) && de.IsNotFound:
		reason = "NXDOMAIN"
	case errors.As(err, &de):
		// Go reports SERVFAIL, REFUSED and the like as "server
		// misbehaving".
		reason = "server failure (" + de.Err + ")"
	}
	p := acme.NewProblem(acme.ProbDNS, "DNS problem: %s looking up %s for %s", reason, qtype, name)
	p.Cause = err
	return p
}

// problemError carries a problem through APIs that return errors (the HTTP
// client's dialer and redirect policy).
type problemError struct{ p *acme.Problem }

// Error implements error.
func (e *problemError) Error() string { return e.p.Error() }

// excerptLen is the most bytes of untrusted content quoted in a detail.
const excerptLen = 128

// excerpt returns b truncated to excerptLen bytes, made valid UTF-8 and
// quoted, with "..." appended when truncated.
func excerpt(b []byte) string {
	trunc := len(b) > excerptLen
	if trunc {
		b = b[:excerptLen]
	}
	q := strconv.Quote(strings.ToValidUTF8(string(b), "\uFFFD"))
	if trunc {
		q += "..."
	}
	return q
}

// connProblem describes err, which happened while doing what (such as
// "Fetching http://example.com/..."); connected tells whether a connection
// had been made, which distinguishes the two kinds of timeout. A problem
// carried by err is returned as is.
func connProblem(what string, err error, connected bool) *acme.Problem {
	var pe *problemError
	if errors.As(err, &pe) {
		return pe.p
	}
	typ, reason := acme.ProbConnection, ""
	var ee *EgressError
	switch {
	case errors.As(err, &ee):
		reason = ee.Error()
	case isTimeout(err):
		if connected {
			reason = "Timeout after connect (the server may be slow or overloaded)"
		} else {
			reason = "Timeout during connect (likely a firewall problem)"
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "Connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		reason = "Connection reset by peer"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		reason = "Host or network unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		reason = "Connection closed by peer"
	case isTLSError(err):
		typ, reason = acme.ProbTLS, "TLS error: "+innermost(err).Error()
	default:
		reason = "Error getting validation data: " + innermost(err).Error()
	}
	if addr := remoteAddr(err); addr != "" {
		reason += " (" + addr + ")"
	}
	p := acme.NewProblem(typ, "%s: %s", what, reason)
	p.Cause = err
	return p
}

// isTimeout reports whether err is a timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// isTLSError reports whether err comes from a TLS handshake.
func isTLSError(err error) bool {
	var alert tls.AlertError
	var rh tls.RecordHeaderError
	return errors.As(err, &alert) || errors.As(err, &rh) ||
		strings.HasPrefix(innermost(err).Error(), "tls: ")
}

// innermost returns the error at the end of err's Unwrap chain.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// remoteAddr returns the remote address named by a *net.OpError in err's
// chain, or "".
func remoteAddr(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		return oe.Addr.String()
	}
	return ""
}
