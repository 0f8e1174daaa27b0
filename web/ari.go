// SPDX-License-Identifier: Apache-2.0

package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
)

// renewalInfoView is the renewalInfo resource (RFC 9773 §4.2).
type renewalInfoView struct {
	SuggestedWindow struct {
		Start time.Time `json:"start"`
		End   time.Time `json:"end"`
	} `json:"suggestedWindow"`
	ExplanationURL string `json:"explanationURL,omitempty"`
}

// renewalInfo answers GET /acme/renewal-info/{certID} with the suggested
// window and a Retry-After for the next poll.
func (s *Server) renewalInfo(w http.ResponseWriter, r *http.Request) error {
	ri, err := s.svc.RenewalInfo(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	var v renewalInfoView
	v.SuggestedWindow.Start, v.SuggestedWindow.End = ri.Start.UTC(), ri.End.UTC()
	v.ExplanationURL = ri.ExplanationURL
	w.Header().Set("Retry-After", strconv.Itoa(int(ri.RetryAfter.Seconds())))
	return writeJSON(w, http.StatusOK, v)
}
