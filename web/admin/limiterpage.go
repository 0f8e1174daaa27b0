// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"strings"
)

// The dashboard's limiter page: the limits, the recent 429s and the
// hottest buckets, the status and explain forms, and the reset form.

// limiterPage is the data of the limiter page.
type limiterPage struct {
	Limits   LimitsView
	Activity *ActivityView
	Denials  []namedCount
	Recent   []DenialGroup // every kept denial, identical ones grouped

	// The status form and its result.
	StatusBy, StatusValue string
	Status                []BucketView
	StatusDone            bool
	StatusErr             string

	// The explain form and its result.
	ExplainAccount, ExplainNames string
	Explain                      *ExplainView
	ExplainErr                   string
}

func (s *Server) pageLimiter(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	act, err := s.Activity(r)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p := limiterPage{Limits: s.Limits(), Activity: act, Denials: denialRows(act.ByLim), Recent: s.recentGroups(r.Context()),
		StatusBy: q.Get("status_by"), StatusValue: strings.TrimSpace(q.Get("status")),
		ExplainAccount: strings.TrimSpace(q.Get("explain_account")), ExplainNames: q.Get("explain_names")}
	status := http.StatusOK
	if p.StatusBy == "" {
		p.StatusBy = "key"
	}
	if p.StatusValue != "" {
		var sq StatusQuery
		switch p.StatusBy {
		case "account":
			sq.Account = p.StatusValue
		case "ip":
			sq.IP = p.StatusValue
		case "key":
			sq.Key = p.StatusValue
		}
		b, err := s.Status(r.Context(), sq)
		if err != nil {
			status, p.StatusErr = s.failStatus(r, err)
		} else {
			p.Status, p.StatusDone = b, true
		}
	}
	if p.ExplainAccount != "" || p.ExplainNames != "" {
		ex, err := s.Explain(r.Context(), p.ExplainAccount, strings.FieldsFunc(p.ExplainNames, func(c rune) bool {
			return c == ',' || c == ' ' || c == '\n' || c == '\t'
		}))
		if err != nil {
			status, p.ExplainErr = s.failStatus(r, err)
		} else {
			p.Explain = ex
		}
	}
	s.render(w, r, status, "limiter", "Limiter", p)
}

func (s *Server) postReset(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.PostFormValue("key"))
	err := s.Reset(r.Context(), key)
	s.afterPost(w, r, localPath(r.PostFormValue("back"), "/limiter"), "reset "+key, err)
}
