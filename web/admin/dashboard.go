// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weir-pki/weir/acme"
)

// The dashboard is server-rendered HTML over the same methods as the JSON
// API. It works without JavaScript; the CSP forbids inline script and
// style, so the stylesheet is an embedded file and charts are SVG with
// presentation attributes. Every POST form carries the CSRF token.

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// pageNames are the dashboard's pages: templates/NAME.html defines
// "content", rendered inside "layout" (templates/layout.html) with the
// shared pieces of templates/partials.html.
var pageNames = []string{"overview", "limiter", "accounts", "account", "certs", "cert", "orders", "order", "config", "eab", "tenants", "tenant", "migration", "error"}

// dashTemplates are parsed once; they are never modified afterwards.
type dashTemplates struct {
	pages map[string]*template.Template
	login *template.Template
}

var dashboard = mustParseTemplates()

func mustParseTemplates() dashTemplates {
	base := template.Must(template.New("base").Funcs(templateFuncs).ParseFS(templateFiles, "templates/layout.html", "templates/partials.html"))
	t := dashTemplates{pages: map[string]*template.Template{}}
	for _, name := range pageNames {
		p := template.Must(base.Clone())
		t.pages[name] = template.Must(p.ParseFS(templateFiles, "templates/"+name+".html"))
	}
	t.login = template.Must(template.New("login").Funcs(templateFuncs).ParseFS(templateFiles, "templates/login.html"))
	return t
}

// revocationReasons are the reasons the revoke form offers (RFC 5280
// §5.3.1 without certificateHold and removeFromCRL).
var revocationReasons = []string{"unspecified", "keyCompromise", "cACompromise", "affiliationChanged",
	"superseded", "cessationOfOperation", "privilegeWithdrawn", "aACompromise"}

var templateFuncs = template.FuncMap{
	"ts":     formatTime,
	"rel":    relTime,
	"dur":    formatDuration,
	"join":   strings.Join,
	"sub":    func(a, b int) int { return a - b },
	"meter":  meterSVG,
	"idents": identValues,
	"resetButton": func(p *pageData, key string) resetButton {
		return resetButton{CSRF: p.CSRF, Key: key, Back: p.Self, Operate: p.Operate}
	},
	"bucketTable": func(p *pageData, id string, b []BucketView) bucketTable {
		return bucketTable{Page: p, ID: id, Buckets: b}
	},
	"reasons":    func() []string { return revocationReasons },
	"tenantForm": newTenantForm,
	"nameList":   newNameList,
}

// resetButton is the one-click reset form of a bucket, shown to the
// operate role only.
type resetButton struct {
	CSRF, Key, Back string
	Operate         bool
}

// bucketTable is a table of buckets with their reset buttons.
type bucketTable struct {
	Page    *pageData
	ID      string
	Buckets []BucketView
}

// timeOf reads a time.Time or *time.Time; nil and zero are false.
func timeOf(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case *time.Time:
		if t != nil && !t.IsZero() {
			return *t, true
		}
	}
	return time.Time{}, false
}

// formatTime prints a time in UTC to the second; "—" for none.
func formatTime(v any) string {
	t, ok := timeOf(v)
	if !ok {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// relTime says how far v is from now: "in 3m20s", "5s ago", "now".
func relTime(now time.Time, v any) string {
	t, ok := timeOf(v)
	if !ok {
		return ""
	}
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + humanDuration(d)
	}
	return humanDuration(-d) + " ago"
}

// humanDuration rounds to what a person reads: seconds under an hour,
// minutes under a day, hours beyond.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	days := int(d / (24 * time.Hour))
	return fmt.Sprintf("%dd %dh", days, int((d%(24*time.Hour))/time.Hour))
}

// formatDuration prints a wait: milliseconds below a second, else seconds.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return humanDuration(d)
}

func identValues(ids []acme.Identifier) string {
	vs := make([]string, len(ids))
	for i, id := range ids {
		vs[i] = id.Value
	}
	return strings.Join(vs, ", ")
}

// pageData is what the layout renders around a page.
type pageData struct {
	Title string
	// Nav is the highlighted menu entry.
	Nav string
	// CSRF is the session's token, which every POST form carries; "" for
	// a request without a session (admin.auth: none, or the bearer token).
	CSRF string
	// Logout shows the logout button (there is a token to log out of).
	Logout bool
	// Who is logged in; Operate says the page shows the forms that change
	// state (roles.go refuses them to the read role anyway).
	Who     Principal
	Operate bool
	Flash   *flashMsg
	Now     time.Time
	// Self is this page's path and query: where a form posted from it
	// comes back to.
	Self string
	Data any
}

// flashMsg is the outcome of the last form, shown once.
type flashMsg struct {
	Msg string
	Err bool
}

// flashCookie carries a flash message across the redirect after a POST.
const flashCookie = "weir_flash"

func (s *Server) setFlash(w http.ResponseWriter, r *http.Request, msg string, isErr bool) {
	if len(msg) > 512 {
		msg = msg[:512]
	}
	kind := "ok|"
	if isErr {
		kind = "err|"
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(kind + msg), Path: "/", MaxAge: 60,
		HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteStrictMode})
}

// takeFlash reads the flash message, if any, and clears it.
func (s *Server) takeFlash(w http.ResponseWriter, r *http.Request) *flashMsg {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteStrictMode})
	v, err := url.QueryUnescape(c.Value)
	if err != nil {
		return nil
	}
	if msg, ok := strings.CutPrefix(v, "err|"); ok {
		return &flashMsg{Msg: msg, Err: true}
	}
	if msg, ok := strings.CutPrefix(v, "ok|"); ok {
		return &flashMsg{Msg: msg}
	}
	return nil
}

// navOf is the menu entry of a page.
func navOf(page string) string {
	switch page {
	case "account", "cert", "order", "tenant":
		return page + "s"
	}
	return page
}

// render writes page name with data, and status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	sess, _ := sessionOf(r.Context())
	p := &pageData{Title: title, Nav: navOf(name), CSRF: sess.csrf, Logout: !s.auth.none,
		Who: principalOf(r.Context()), Operate: can(r, RoleOperate),
		Now: s.cfg.Now().UTC(), Self: r.URL.RequestURI(), Data: data}
	p.Flash = s.takeFlash(w, r)
	var buf bytes.Buffer
	if err := dashboard.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		s.cfg.Log.Error("admin dashboard: rendering a page", "page", name, "err", err)
		http.Error(w, "internal error; see the server log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// errorPage is the data of the error page.
type errorPage struct {
	Status     int
	StatusText string
	Message    string
}

// failStatus maps an error as the API's fail does: bad requests and ACME
// problems keep their status and message, anything else is a 500 whose
// cause is logged and not shown.
func (s *Server) failStatus(r *http.Request, err error) (int, string) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.msg
	}
	var p *acme.Problem
	if errors.As(err, &p) && p.Type != acme.ProbServerInternal {
		status := p.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		return status, p.Detail
	}
	s.cfg.Log.Error("admin dashboard error", "path", r.URL.Path, "err", err)
	return http.StatusInternalServerError, "internal error; see the server log"
}

// failPage renders the error page for err.
func (s *Server) failPage(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := s.failStatus(r, err)
	s.render(w, r, status, "error", http.StatusText(status), errorPage{Status: status, StatusText: http.StatusText(status), Message: msg})
}

// afterPost answers a dashboard form: back to the page it came from with
// the outcome as a flash message. A refused request (4xx) is told there;
// an internal error gets the error page.
func (s *Server) afterPost(w http.ResponseWriter, r *http.Request, back, okMsg string, err error) {
	if err != nil {
		status, msg := s.failStatus(r, err)
		if status >= 500 {
			s.render(w, r, status, "error", http.StatusText(status), errorPage{Status: status, StatusText: http.StatusText(status), Message: msg})
			return
		}
		s.setFlash(w, r, msg, true)
	} else {
		s.setFlash(w, r, okMsg, false)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// localPath keeps a redirect target on this site: a path that starts
// with one slash; anything else becomes def.
func localPath(back, def string) string {
	if back == "" || back[0] != '/' || strings.HasPrefix(back, "//") || strings.ContainsAny(back, "\\\r\n\t") {
		return def
	}
	return back
}

// dashboardRoutes mounts the dashboard's pages.
func (s *Server) dashboardRoutes(r chi.Router) {
	r.Get("/", s.pageOverview)
	r.Get("/limiter", s.pageLimiter)
	r.Post("/limiter/reset", s.postReset)
	r.Get("/accounts", s.pageAccounts)
	r.Get("/accounts/{id}", s.pageAccount)
	r.Post("/accounts/{id}/deactivate", s.postDeactivate)
	r.Get("/certs", s.pageCerts)
	r.Get("/certs/{serial}", s.pageCert)
	r.Post("/certs/{serial}/revoke", s.postRevoke)
	r.Get("/migration", s.pageMigration)
	s.moreRoutes(r)
}

// serveStatic serves the embedded stylesheet and icons: files only, no
// listings.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := path.Clean("static/" + chi.URLParam(r, "*"))
	b, err := fs.ReadFile(staticFiles, name)
	if err != nil || !strings.HasPrefix(name, "static/") {
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}

// namedCount is one line of a count table.
type namedCount struct {
	Name string
	N    uint64
}

// countRows lists counts in the given order first, then any other key
// alphabetically.
func countRows[K ~string](m map[K]int, order ...K) ([]namedCount, uint64) {
	var (
		rows  []namedCount
		total uint64
	)
	for _, k := range order {
		rows = append(rows, namedCount{Name: string(k), N: uint64(m[k])})
		total += uint64(m[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(order, k) {
			rows = append(rows, namedCount{Name: string(k), N: uint64(m[k])})
			total += uint64(m[k])
		}
	}
	return rows, total
}

// denialRows sorts denials by limit, most first.
func denialRows(m map[string]uint64) []namedCount {
	var rows []namedCount
	for k, n := range m {
		rows = append(rows, namedCount{Name: k, N: n})
	}
	slices.SortFunc(rows, func(a, b namedCount) int {
		if c := cmp.Compare(b.N, a.N); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return rows
}

// expiry is one CA certificate's expiry.
type expiry struct {
	Name     string
	Subject  string
	NotAfter time.Time
	DaysLeft int
	// Warn is set under 30 days.
	Warn bool
}

func newExpiry(name, subject string, notAfter, now time.Time) expiry {
	days := int(notAfter.Sub(now).Hours() / 24)
	return expiry{Name: name, Subject: subject, NotAfter: notAfter, DaysLeft: days, Warn: days < 30}
}

type overviewPage struct {
	View                      *OverviewView
	Accounts, Orders, Certs   []namedCount
	AccountsN, OrdersN, CertN uint64
	Chart                     template.HTML
	Issued48h                 int
	Expiry                    []expiry
	Denials                   []namedCount
}

func (s *Server) pageOverview(w http.ResponseWriter, r *http.Request) {
	v, err := s.Overview(r.Context())
	if err != nil {
		s.failPage(w, r, err)
		return
	}
	now := s.cfg.Now().UTC()
	p := overviewPage{View: v, Denials: denialRows(v.Denials)}
	p.Accounts, p.AccountsN = countRows(v.Counts.Accounts, acme.StatusValid, acme.StatusDeactivated, acme.StatusRevoked)
	p.Orders, p.OrdersN = countRows(v.Counts.Orders, acme.StatusPending, acme.StatusProcessing, acme.StatusValid, acme.StatusInvalid)
	p.Certs, p.CertN = countRows(v.Counts.Certificates, acme.CertActive, acme.CertRevoked, acme.CertExpired)
	step, err := time.ParseDuration(v.IssuanceStep)
	if err != nil || step <= 0 {
		step = time.Hour
	}
	p.Chart = issuanceChart(v.IssuanceFrom, step, v.Issuance).SVG()
	for _, n := range v.Issuance {
		p.Issued48h += n
	}
	if v.RootExpires != nil {
		p.Expiry = append(p.Expiry, newExpiry("root", "", *v.RootExpires, now))
	}
	p.Expiry = append(p.Expiry, newExpiry("intermediate", v.Intermediate, v.IntermediateExpires, now))
	s.render(w, r, http.StatusOK, "overview", "Overview", p)
}

// loginPage is the data of the login page.
type loginPage struct {
	Msg string
}

// renderLogin writes the login page with msg (a refusal) above the form.
func (s *Server) renderLogin(w http.ResponseWriter, msg string) {
	var buf bytes.Buffer
	if err := dashboard.login.ExecuteTemplate(&buf, "login", loginPage{Msg: msg}); err != nil {
		s.cfg.Log.Error("admin dashboard: rendering the login page", "err", err)
		http.Error(w, "internal error; see the server log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}
