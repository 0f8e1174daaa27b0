// SPDX-License-Identifier: Apache-2.0

package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// writeJSON writes v pretty-printed, one key per line (some shell clients
// parse the response line by line).
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return acme.Internal(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// retryAfter formats a Retry-After value as whole seconds, rounded up, at
// least 1 (clients reject the HTTP-date form).
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(ratelimit.CeilSeconds(d), 1), 10)
}

// unavailableRetryAfter is the Retry-After of a problem that has none of
// its own but is sent with a 5xx status or without a fresh nonce: what
// failed is a backend (the store, the nonce store) that is usually back
// within seconds, and clients that honour Retry-After retry instead of
// giving up (x/crypto/acme retries 5xx; every client retries badNonce).
const unavailableRetryAfter = time.Second

// renderProblem writes err as a problem document (RFC 7807, RFC 8555 §6.7)
// and returns the problem sent. Anything that is not a Problem becomes a
// generic serverInternal; its cause goes only to the log. Every 5xx, and
// every problem sent without a Replay-Nonce, carries a Retry-After.
func (s *Server) renderProblem(w http.ResponseWriter, err error) *acme.Problem {
	p := acme.AsProblem(err)
	hdr := w.Header()
	status := p.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	b, merr := json.MarshalIndent(p, "", "  ")
	if merr != nil {
		status, b = http.StatusInternalServerError, []byte(`{"type":"urn:ietf:params:acme:error:serverInternal"}`)
	}
	if p.RetryAfter > 0 {
		hdr.Set("Retry-After", retryAfter(p.RetryAfter))
	} else if rec, ok := w.(*statusRecorder); status >= 500 || ok && rec.nonceErr != nil {
		hdr.Set("Retry-After", retryAfter(unavailableRetryAfter))
	}
	if p.HelpURL != "" {
		hdr.Add("Link", link(p.HelpURL, "help"))
	}
	var inUse *acme.KeyInUse
	if errors.As(err, &inUse) {
		hdr.Set("Location", s.urls.account(inUse.AccountID))
	}
	hdr.Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return p
}

// logRequest writes the one wide line per request: endpoint, method,
// status, client IP, account, the problem (type, detail, hidden cause),
// what the limiter decided (limiter) and any backend error the policy
// resolved (limiter_error), and the duration. Request bodies, JWS
// payloads and signatures, and keys never go to the log; a problem detail
// quotes at most a protected-header value the client sent (a refused
// nonce or url), which is no secret.
func (s *Server) logRequest(r *http.Request, endpoint string, rec *statusRecorder, p *acme.Problem, d time.Duration) {
	level := slog.LevelInfo
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs,
		slog.String("endpoint", endpoint),
		slog.String("method", r.Method),
		slog.Int("status", rec.status),
		slog.String("client_ip", rec.ip.String()),
	)
	if rec.account != "" {
		attrs = append(attrs, slog.String("account", string(rec.account)))
	}
	if p != nil {
		attrs = append(attrs, slog.String("problem", string(p.Type)), slog.String("detail", p.Detail))
		if p.Cause != nil {
			attrs = append(attrs, slog.String("cause", p.Cause.Error()))
		}
		if p.Type == acme.ProbServerInternal {
			level = slog.LevelError
		}
	}
	if rec.ev.Limiter != "" {
		attrs = append(attrs, slog.String("limiter", rec.ev.Limiter))
	}
	if rec.ev.LimiterError != "" {
		attrs = append(attrs, slog.String("limiter_error", rec.ev.LimiterError))
	}
	if rec.nonceErr != nil {
		// Sent without a Replay-Nonce: the nonce store failed.
		attrs = append(attrs, slog.String("nonce_error", rec.nonceErr.Error()))
		level = max(level, slog.LevelWarn)
	}
	attrs = append(attrs, slog.Duration("duration", d))
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}
