// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
)

// The dashboard's pages of the inventory: the account and certificate
// listings with their filters and paging, each account's and
// certificate's page, and their deactivate and revoke forms.

// listPage is a page of a listing with its filters and paging links.
type listPage[T any] struct {
	Items []T
	// Query holds the filters (q, status, state, account).
	Query url.Values
	// NextURL and FirstURL page; "" when there is no such page.
	NextURL, FirstURL string
	Statuses          []string
}

// pagingLinks are the links to the next page (after cursor next) and
// back to the first; "" when there is none.
func pagingLinks(r *http.Request, next string) (nextURL, firstURL string) {
	q := r.URL.Query()
	if next != "" {
		n := maps.Clone(q)
		n.Set("cursor", next)
		nextURL = r.URL.Path + "?" + n.Encode()
	}
	if q.Get("cursor") != "" {
		q.Del("cursor")
		firstURL = r.URL.Path
		if len(q) > 0 {
			firstURL += "?" + q.Encode()
		}
	}
	return nextURL, firstURL
}

func (s *Server) pageAccounts(w http.ResponseWriter, r *http.Request) {
	pg, err := s.Accounts(r)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p := listPage[AccountView]{Items: pg.Items, Query: r.URL.Query(), Statuses: []string{"valid", "deactivated", "revoked"}}
	p.NextURL, p.FirstURL = pagingLinks(r, pg.Next)
	s.render(w, r, http.StatusOK, "accounts", "Accounts", p)
}

// withQuery is r with its query replaced, for calling the listing methods
// on behalf of another page.
func withQuery(r *http.Request, q url.Values) *http.Request {
	r2 := r.Clone(r.Context())
	u := *r.URL
	u.RawQuery = q.Encode()
	r2.URL = &u
	return r2
}

type accountPage struct {
	Account   AccountView
	Certs     []CertView
	CertsMore bool
	Orders    []OrderView
	OrdMore   bool
	Buckets   []BucketView
	BucketErr string
}

// accountListing is how many certificates and orders the account page
// shows.
const accountListing = 20

func (s *Server) pageAccount(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	a, err := s.cfg.Service.Store().GetAccount(r.Context(), acme.AccountID(id))
	if err != nil {
		s.failPage(w, r, notFound(err, "account "+id))
		return
	}
	p := accountPage{Account: accountView(a)}
	sub := withQuery(r, url.Values{"account": {id}, "limit": {fmt.Sprint(accountListing)}})
	certs, err := s.Certs(sub)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p.Certs, p.CertsMore = certs.Items, certs.Next != ""
	orders, err := s.Orders(sub)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p.Orders, p.OrdMore = orders.Items, orders.Next != ""
	if b, err := s.Status(r.Context(), StatusQuery{Account: id}); err != nil {
		_, p.BucketErr = s.failStatus(r, err)
	} else {
		p.Buckets = b
	}
	s.render(w, r, http.StatusOK, "account", "Account "+id, p)
}

func (s *Server) postDeactivate(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	back := "/accounts/" + url.PathEscape(id)
	if r.PostFormValue("confirm") != "yes" {
		s.afterPost(w, r, back, "", badRequest("tick the confirmation box to deactivate account %s", id))
		return
	}
	a, err := s.cfg.Service.AdminDeactivateAccount(r.Context(), acme.AccountID(id))
	if err == nil {
		s.logAction(r.Context(), "admin: account deactivated", "account", a.ID)
	}
	s.afterPost(w, r, back, "deactivated account "+id, err)
}

func (s *Server) pageCerts(w http.ResponseWriter, r *http.Request) {
	pg, err := s.Certs(r)
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	p := listPage[CertView]{Items: pg.Items, Query: r.URL.Query(), Statuses: []string{"active", "revoked", "expired"}}
	p.NextURL, p.FirstURL = pagingLinks(r, pg.Next)
	s.render(w, r, http.StatusOK, "certs", "Certificates", p)
}

func (s *Server) pageCert(w http.ResponseWriter, r *http.Request) {
	serial := normalizeSerial(chi.URLParam(r, "serial"))
	c, err := s.cfg.Service.Store().GetCertificate(r.Context(), serial)
	if err != nil {
		s.failPage(w, r, notFound(err, "certificate "+serial))
		return
	}
	s.render(w, r, http.StatusOK, "cert", "Certificate "+serial, certView(c, s.cfg.Now().UTC(), true))
}

func (s *Server) postRevoke(w http.ResponseWriter, r *http.Request) {
	serial := normalizeSerial(chi.URLParam(r, "serial"))
	back := "/certs/" + url.PathEscape(serial)
	if r.PostFormValue("confirm") != "yes" {
		s.afterPost(w, r, back, "", badRequest("tick the confirmation box to revoke certificate %s", serial))
		return
	}
	reason := r.PostFormValue("reason")
	v, err := s.Revoke(r, serial, reason)
	msg := ""
	if err == nil {
		msg = fmt.Sprintf("revoked certificate %s (%s)", v.Serial, v.Reason)
	}
	s.afterPost(w, r, back, msg, err)
}
