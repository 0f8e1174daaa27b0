// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
)

// TransparencyLog is what the admin API reads of the verifiable log
// (acme/transparency): Config.TransparencyLog is nil when the log is off.
type TransparencyLog interface {
	// Info describes the log as it stands.
	Info(ctx context.Context) (LogInfo, error)
	// Prove returns the inclusion proof of the certificate serial (weir's
	// form of a serial), checkable offline against the checkpoint it
	// carries; an error wrapping acme.ErrNotFound when the certificate has
	// no integrated entry (unknown, or still waiting for the sequencer).
	Prove(ctx context.Context, serial string) (any, error)
}

// LogInfo describes the verifiable log: GET /api/v1/log.
type LogInfo struct {
	// Origin names the log; VerifierKey is its key in the signed-note
	// form ("origin+hash+base64") monitors and witnesses are given.
	Origin      string `json:"origin"`
	VerifierKey string `json:"verifier_key"`
	// Size is the tree's size; Checkpoint its signed checkpoint.
	Size       int64  `json:"size"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// OldestPendingSeconds is how long the oldest entry not yet in the
	// tree has waited (0 when none waits); Behind is true when that is
	// longer than MaxLagSeconds (transparency.max-lag).
	OldestPendingSeconds float64 `json:"oldest_pending_seconds"`
	MaxLagSeconds        float64 `json:"max_lag_seconds"`
	Behind               bool    `json:"behind"`
}

// errLogOff is the answer of the log's endpoints when it is off.
var errLogOff = &apiError{status: http.StatusNotFound, msg: "the verifiable log is off (transparency.enabled: false)"}

func (s *Server) logRoutes(r chi.Router) {
	r.Get("/log", s.api(s.apiLog))
	r.Get("/log/proof/{serial}", s.api(s.apiLogProof))
}

func (s *Server) apiLog(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.TransparencyLog == nil {
		return errLogOff
	}
	info, err := s.cfg.TransparencyLog.Info(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

func (s *Server) apiLogProof(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.TransparencyLog == nil {
		return errLogOff
	}
	serial := normalizeSerial(chi.URLParam(r, "serial"))
	p, err := s.cfg.TransparencyLog.Prove(r.Context(), serial)
	if errors.Is(err, acme.ErrNotFound) {
		return &apiError{status: http.StatusNotFound, msg: "certificate " + serial + " has no entry in the log's tree (no such certificate, or its entry waits for the sequencer)"}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
