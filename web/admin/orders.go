// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
)

// moreRoutes mounts the dashboard pages kept out of dashboard.go: the
// orders with their detail, the configuration, the EAB keys and the
// tenants (tenantpage.go).
func (s *Server) moreRoutes(r chi.Router) {
	r.Get("/orders", s.pageOrders)
	r.Get("/orders/{id}", s.pageOrder)
	r.Get("/config", s.pageConfig)
	r.Route("/eab", func(r chi.Router) {
		r.Get("/", s.pageEAB)
		r.Post("/", s.postEABCreate)
		r.Post("/{id}/revoke", s.postEABRevoke)
	})
	s.tenantPageRoutes(r)
}

func (s *Server) pageOrders(w http.ResponseWriter, r *http.Request) {
	pg, err := s.Orders(r)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p := listPage[OrderView]{Items: pg.Items, Query: r.URL.Query(), Statuses: []string{"pending", "processing", "valid", "invalid"}}
	p.NextURL, p.FirstURL = pagingLinks(r, pg.Next)
	s.render(w, r, http.StatusOK, "orders", "Orders", p)
}

// ProblemView is an ACME problem as the admin API shows it.
type ProblemView struct {
	Type   string `json:"type"`
	Detail string `json:"detail"`
}

// AuthzView is an authorization of an order with its challenges.
type AuthzView struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Status     string          `json:"status"`
	Expires    time.Time       `json:"expires"`
	Challenges []ChallengeView `json:"challenges"`
}

// ChallengeView is one challenge of an authorization.
type ChallengeView struct {
	Type   string       `json:"type"`
	Status string       `json:"status"`
	Error  *ProblemView `json:"error,omitempty"`
}

// orderPage is the order detail page: the order with its derived status
// and its authorizations.
type orderPage struct {
	Order    OrderView
	Stored   string // the stored status, when the derived one differs
	Profile  string
	Authzs   []AuthzView
	AuthzErr string
}

func (s *Server) pageOrder(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	ctx := r.Context()
	o, err := s.cfg.Service.Store().GetOrder(ctx, acme.OrderID(id))
	if err != nil {
		s.failPage(w, r, notFound(err, "order "+id))
		return
	}
	stored := o.Status
	if o, err = s.cfg.Service.OrderStatusNow(ctx, o); err != nil {
		s.failPage(w, r, err)
		return
	}
	p := orderPage{Order: orderView(o), Profile: o.Profile}
	if o.Status != stored {
		p.Stored = string(stored)
	}
	for _, aid := range o.AuthzIDs {
		a, err := s.cfg.Service.Store().GetAuthz(ctx, aid)
		if err != nil {
			_, p.AuthzErr = s.failStatus(r, notFound(err, "authorization "+string(aid)))
			break
		}
		v := AuthzView{ID: string(a.ID), Name: a.Name(), Status: string(a.Status), Expires: a.Expires}
		for _, ch := range a.Challenges {
			cv := ChallengeView{Type: string(ch.Type), Status: string(ch.Status)}
			if ch.Error != nil {
				cv.Error = &ProblemView{Type: string(ch.Error.Type), Detail: ch.Error.Detail}
			}
			v.Challenges = append(v.Challenges, cv)
		}
		p.Authzs = append(p.Authzs, v)
	}
	s.render(w, r, http.StatusOK, "order", "Order "+id, p)
}

func (s *Server) pageConfig(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "config", "Configuration", s.cfg.Config())
}
