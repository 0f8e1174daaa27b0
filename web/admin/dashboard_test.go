// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"golang.org/x/net/html"

	"github.com/weir-pki/weir/acme"
)

// The dashboard's pages through a real Service are tested in
// server/dashboard_test.go (and in a browser in
// server/dashboard_browser_test.go); here each template is rendered with
// hand-made views, edge cases included, without a store.

var testNow = time.Date(2025, 5, 3, 12, 0, 0, 0, time.UTC)

func testServer(logw *bytes.Buffer) *Server {
	log := slog.New(slog.DiscardHandler)
	if logw != nil {
		log = slog.New(slog.NewTextHandler(logw, nil))
	}
	now := func() time.Time { return testNow }
	return &Server{cfg: Config{Token: "the-token", Log: log, Now: now}, auth: newAuth("the-token", nil, now)}
}

// sessionRequest is a GET of target by a browser logged in with the token
// file's credential whose session has the CSRF token "csrf-value".
func sessionRequest(target string) *http.Request {
	return sessionRequestAs(target, root)
}

// sessionRequestAs is sessionRequest logged in as who.
func sessionRequestAs(target string, who Principal) *http.Request {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	return r.WithContext(withSession(withPrincipal(r, who), requestSession{id: "sess", csrf: "csrf-value", who: who}))
}

func tp(t time.Time) *time.Time { return &t }

// form is one form of a page: method, action and its inputs by name.
type form struct {
	method, action string
	inputs         map[string]string
}

// parseForms parses body and returns its forms, failing the test on
// anything the CSP would refuse (inline script, style or handlers).
func parseForms(t *testing.T, body string) (forms []form, doc *html.Node) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var cur *form
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > 200 {
			t.Fatal("document too deep")
		}
		get := func(k string) string {
			for _, a := range n.Attr {
				if a.Key == k {
					return a.Val
				}
			}
			return ""
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				forms = append(forms, form{method: strings.ToLower(get("method")), action: get("action"), inputs: map[string]string{}})
				cur = &forms[len(forms)-1]
				defer func() { cur = nil }()
			case "input", "select":
				if cur != nil {
					cur.inputs[get("name")] = get("value")
				}
			}
			if get("style") != "" {
				t.Errorf("<%s> has an inline style, which the CSP refuses", n.Data)
			}
			if n.Data == "script" || n.Data == "style" {
				t.Errorf("inline <%s>: the CSP refuses it", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s %s=...>: inline handlers are refused by the CSP", n.Data, a.Key)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(doc, 0)
	return forms, doc
}

func TestDashboardTemplates(t *testing.T) {
	denied := []DeniedView{{Bucket: "order-creation:7", Limit: "order-creation", Key: "7", RetryAfter: "2m59s", PassesAt: testNow.Add(3 * time.Minute)},
		{Bucket: "san-budget:7", Limit: "san-budget", Key: "7", Never: true}}
	hot := []BucketView{
		{Bucket: "order-creation:7", Limit: "order-creation", Key: "7", Enabled: true, Describe: "20 per 1h, burst 1", Capacity: 1, Remaining: 0,
			NextAt: tp(testNow.Add(3 * time.Minute)), FullAt: tp(testNow.Add(3 * time.Minute)), At: tp(testNow)},
		{Bucket: "registered-domain:example.com", Limit: "registered-domain", Key: "example.com", Enabled: false},
		{Bucket: "san-budget:7", Limit: "san-budget", Key: "7", Enabled: true, Override: true, Describe: "100 per 1h", Capacity: 100, Remaining: 99},
	}
	cfgInfo := ConfigInfo{File: "/etc/weir/weir.yaml", YAML: "server:\n  listen: ':14000' # <b>", StartedAt: testNow.Add(-time.Hour),
		Reload: &ReloadInfo{At: testNow.Add(-time.Minute), OK: false, Error: "rate-limiting.order-creation: burst must be positive", NeedsRestart: []string{"storage.path"}}}
	cert := CertView{Serial: "0abc", Account: "7", Order: "9", Names: []string{"a.example", "b.example"}, State: "active",
		NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(90 * 24 * time.Hour), IssuedAt: testNow.Add(-time.Hour),
		Subject: "CN=a.example", Issuer: "CN=weir intermediate", PEM: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}
	revoked := cert
	revoked.Serial, revoked.State, revoked.RevokedAt, revoked.Reason = "0def", "revoked", tp(testNow), "keyCompromise"
	validated := cert
	validated.Validations = &[]acme.NameValidation{
		{Name: "a.example", Method: "delegated-zone:.auto.a.example", AuthzID: "az1", ValidatedAt: testNow},
		{Name: "b.example", Method: "dns-01", AuthzID: "az2", ValidatedAt: testNow.Add(-time.Hour), Reused: true}}
	acct := AccountView{ID: "7", Status: "valid", Contact: []string{"mailto:ops@example.com"}, KeyThumbprint: "thumb", CreatedAt: testNow.Add(-time.Hour), CreatedIP: "127.0.0.1"}
	order := OrderView{ID: "9", Account: "7", Status: "invalid", Identifiers: []acme.Identifier{{Type: "dns", Value: "a.example"}},
		CreatedAt: testNow.Add(-time.Hour), Expires: testNow.Add(time.Hour), Error: &ProblemView{Type: "urn:ietf:params:acme:error:unauthorized", Detail: "no <token>"}}

	tests := []struct {
		page, title string
		data        any
		want        []string
		wantNot     []string
		posts       []string // actions of the POST forms expected
	}{
		{"overview", "Overview", overviewPage{
			View:     &OverviewView{Config: cfgInfo},
			Accounts: []namedCount{{"valid", 3}, {"deactivated", 1}}, AccountsN: 4,
			Chart:   issuanceChart(testNow.Add(-47*time.Hour), time.Hour, make([]int, 48)).SVG(),
			Expiry:  []expiry{newExpiry("root", "", testNow.Add(3650*24*time.Hour), testNow), newExpiry("intermediate", "CN=weir", testNow.Add(10*24*time.Hour), testNow)},
			Denials: []namedCount{{"order-creation", 2}},
		}, []string{"Certificates issued, last 48 hours", "3650 days left", "10 days left", `class="warn"`, "order-creation", "refused"}, nil, []string{"/logout"}},
		{"limiter", "Limiter", limiterPage{
			Limits: LimitsView{Limits: []LimitView{{Limit: "order-creation", Enabled: true, Kind: "rate", Describe: "20 per 1h, burst 1"}},
				Overrides: []OverrideView{{Bucket: "order-creation:7", Describe: "5 per 1h, burst 5"}}},
			Activity: &ActivityView{Hot: hot},
			Recent: groupDenials([]Denial{{At: testNow.Add(-time.Second * 5), Action: "new-order", Limit: "order-creation", Key: "7", RetryAfter: 179 * time.Second, Denied: 2},
				{At: testNow, Action: "new-order", Limit: "san-budget", Key: "7", Never: true, Denied: 1}}),
			Denials:  []namedCount{{"order-creation", 1}},
			StatusBy: "key", StatusValue: "order-creation:7", Status: hot[:1], StatusDone: true,
			ExplainAccount: "7", ExplainNames: "a.example", Explain: &ExplainView{Account: "7", Limit: "order-creation", Key: "7",
				RetryAfter: "2m59s", PassesAt: tp(testNow.Add(3 * time.Minute)), Detail: "too many new orders", Denied: denied},
		}, []string{"Recent 429s", `data-bucket="order-creation:7"`, "2m59s", "+1 more", "never", "20 per 1h, burst 1", "override",
			`data-remaining="0"`, `data-capacity="1"`, "Denied by <strong>order-creation</strong>", "5 per 1h, burst 5", "disabled", "in 3m0s"},
			nil, []string{"/limiter/reset", "/logout"}},
		{"limiter", "Limiter", limiterPage{Activity: &ActivityView{}, StatusBy: "key", ExplainErr: "name an account and at least one name",
			StatusErr: "name exactly one of account, ip or key", ExplainAccount: "7", Explain: nil},
			[]string{"No request has been refused since the start.", "No buckets.", "name an account", "name exactly one"}, []string{"status-result"}, nil},
		{"limiter", "Limiter", limiterPage{Activity: &ActivityView{}, Explain: &ExplainView{Account: "7", Allowed: true, FreshAuthzs: 2,
			Identifiers: []acme.Identifier{{Type: "dns", Value: "x.example"}}}}, []string{"Allowed", "x.example", "2 new authorizations"}, nil, nil},
		{"limiter", "Limiter", limiterPage{Activity: &ActivityView{}, Explain: &ExplainView{Account: "7",
			Problem: &ProblemView{Type: "urn:ietf:params:acme:error:rejectedIdentifier", Detail: "x.invalid is not allowed"}}},
			[]string{"Refused before the limiter", "x.invalid is not allowed"}, nil, nil},
		{"accounts", "Accounts", listPage[AccountView]{Items: []AccountView{acct}, Query: url.Values{"q": {"ops"}}, NextURL: "/accounts?cursor=abc&q=ops",
			FirstURL: "/accounts?q=ops", Statuses: []string{"valid", "deactivated"}},
			[]string{`href="/accounts/7"`, "mailto:ops@example.com", `value="ops"`, "next page", "first page", "badge-valid"}, nil, nil},
		{"accounts", "Accounts", listPage[AccountView]{}, []string{"No accounts match."}, []string{"next page"}, nil},
		{"account", "Account 7", accountPage{Account: acct, Certs: []CertView{cert}, CertsMore: true, Orders: []OrderView{order}, Buckets: hot},
			[]string{"Account 7", "0abc", "All certificates of this account", "Limiter buckets", "I am sure", "a.example"}, nil,
			[]string{"/accounts/7/deactivate", "/limiter/reset"}},
		{"account", "Account 8", accountPage{Account: AccountView{ID: "8", Status: "deactivated"}, BucketErr: "account 8: boom"},
			[]string{"No certificates.", "No orders.", "account 8: boom"}, []string{"Deactivate"}, nil},
		{"certs", "Certificates", listPage[CertView]{Items: []CertView{cert, revoked}, Query: url.Values{"account": {"7"}, "state": {"active"}}, Statuses: []string{"active", "revoked", "expired"}},
			[]string{`href="/certs/0abc"`, "keyCompromise", "of account 7", `<option value="active" selected>`}, nil, nil},
		{"cert", "Certificate 0abc", cert, []string{"-----BEGIN CERTIFICATE-----", "CN=a.example", "keyCompromise", "cessationOfOperation", "aACompromise", "I am sure",
			"unknown: issued before weir recorded how each name was validated"}, nil, []string{"/certs/0abc/revoke"}},
		{"cert", "Certificate 0abc", validated, []string{`id="cert-validations"`, "delegated-zone:.auto.a.example", "az1", "dns-01", "az2", "yes: an earlier order"},
			[]string{"unknown: issued"}, []string{"/certs/0abc/revoke"}},
		{"cert", "Certificate 0def", revoked, []string{"Revoked", "keyCompromise"}, []string{`action="/certs/0def/revoke"`}, nil},
		{"orders", "Orders", listPage[OrderView]{Items: []OrderView{order}, Statuses: []string{"pending", "valid"}},
			[]string{"a.example", "no &lt;token&gt;", "badge-invalid"}, []string{"<token>"}, nil},
		{"order", "Order 9", orderPage{Order: order, Stored: "pending", Authzs: []AuthzView{{ID: "3", Name: "a.example", Status: "invalid",
			Challenges: []ChallengeView{{Type: "http-01", Status: "invalid", Error: &ProblemView{Type: "urn:ietf:params:acme:error:connection", Detail: "refused <x>"}}}}}},
			[]string{`id="order-status"><span class="badge badge-invalid">invalid`, "Stored status", `href="/accounts/7"`, "refused &lt;x&gt;", "no &lt;token&gt;"}, nil, nil},
		{"tenants", "Tenants", tenantsPage{Tenants: []TenantView{{Name: "team-a", AllowedNames: []string{".a.example"}, UpdatedAt: testNow}}},
			[]string{`href="/tenants/team-a"`, ".a.example", `id="tenant_name"`}, nil, []string{"/tenants"}},
		{"tenant", "Tenant team-a", &TenantReport{Tenant: TenantView{Name: "team-a", AllowedNames: []string{".a.example"}, MaxLifetime: "720h"},
			RefusalsByRule: map[string]uint64{"denied-names": 3},
			Refusals:       []RefusalView{{At: testNow, Rule: "denied-names", Action: "new-order", Account: "7", Identifier: "db.a.example", Detail: "no <b>"}},
			Accounts:       []TenantAccount{{ID: "7", KeyID: "k1", Buckets: []BucketView{{Bucket: "order-creation:7", Limit: "order-creation", Key: "7", Enabled: true, Capacity: 10, Remaining: 4}}}},
			EABKeys:        []EABKeyView{{KeyID: "k1", Label: "team-a", Tenant: "team-a", Status: "bound", BoundAccount: "7", CreatedAt: testNow}},
			Certificates:   []CertView{{Serial: "0abc", Account: "7", Names: []string{"x.a.example"}, State: "active", IssuedAt: testNow, NotAfter: testNow.Add(time.Hour)}}},
			[]string{"720h", `data-rule="denied-names"`, `href="/certs/0abc"`, "db.a.example", "no &lt;b&gt;", `data-bucket="order-creation:7"`, `value=".a.example"`},
			[]string{"no <b>"}, []string{"/tenants/team-a", "/tenants/team-a/delete", "/limiter/reset"}},
		{"eab", "EAB keys", eabPage{Keys: []EABKeyView{{KeyID: "k1", Label: "team-x", Status: "bound", BoundAccount: "7", CreatedAt: testNow},
			{KeyID: "k2", Label: "team-x", Status: "revoked", RevokedAt: tp(testNow)}}, Created: &EABKeyView{KeyID: "k3", Label: "team-y", HMACKey: "c2VjcmV0"}},
			[]string{"c2VjcmV0", "shown this once", `href="/accounts/7"`, "badge-revoked"}, []string{`action="/eab/k2/revoke"`}, []string{"/eab", "/eab/k1/revoke", "/logout"}},
		{"config", "Configuration", cfgInfo, []string{"/etc/weir/weir.yaml", "listen: &#39;:14000&#39; # &lt;b&gt;", "burst must be positive", "storage.path", "refused"}, []string{"# <b>"}, nil},
		{"config", "Configuration", ConfigInfo{YAML: "a: 1"}, []string{"built-in defaults", "no reload since the start"}, nil, nil},
		{"error", "Not Found", errorPage{Status: 404, StatusText: "Not Found", Message: "account <9> does not exist"}, []string{"404 Not Found", "account &lt;9&gt; does not exist"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			var logs bytes.Buffer
			s := testServer(&logs)
			rec := httptest.NewRecorder()
			s.render(rec, sessionRequest("/"+tt.page+"?x=1"), http.StatusOK, tt.page, tt.title, tt.data)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("status %d, content type %q; log: %s\n%s", rec.Code, rec.Header().Get("Content-Type"), logs.String(), body)
			}
			want := append(tt.want, "<title>"+html.EscapeString(tt.title)+" · weir admin</title>", `href="/static/weir.css"`)
			if tt.page != "error" {
				want = append(want, `aria-current="page"`)
			}
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("page has %q", w)
				}
			}
			forms, _ := parseForms(t, body)
			posted := map[string]bool{}
			for _, f := range forms {
				if f.method != "post" {
					continue
				}
				posted[f.action] = true
				if f.inputs["csrf"] != "csrf-value" {
					t.Errorf("POST form to %s has csrf %q, want the session's token", f.action, f.inputs["csrf"])
				}
				if f.action == "/limiter/reset" && (f.inputs["key"] == "" && f.inputs["back"] != "/limiter" || !strings.HasPrefix(f.inputs["back"], "/")) {
					t.Errorf("reset form %+v lacks a key or a local back", f.inputs)
				}
			}
			for _, a := range tt.posts {
				if !posted[a] {
					t.Errorf("no POST form to %s; have %v", a, posted)
				}
			}
			// A read-only login sees the page without a form that
			// changes state: its only POST form is the logout.
			rec = httptest.NewRecorder()
			s.render(rec, sessionRequestAs("/"+tt.page+"?x=1", Principal{Name: "viewer", Role: RoleRead}), http.StatusOK, tt.page, tt.title, tt.data)
			forms, _ = parseForms(t, rec.Body.String())
			for _, f := range forms {
				if f.method == "post" && f.action != "/logout" {
					t.Errorf("the read role sees a POST form to %s", f.action)
				}
			}
			if !strings.Contains(rec.Body.String(), `id="who-name">viewer</strong>`) {
				t.Errorf("the page does not say viewer is logged in")
			}
		})
	}
}

// TestDashboardNavigation: every page has the menu with the current entry
// marked and the logout button, which is left out without a token.
func TestDashboardNavigation(t *testing.T) {
	s := testServer(nil)
	rec := httptest.NewRecorder()
	s.render(rec, sessionRequest("/config"), http.StatusOK, "config", "Configuration", ConfigInfo{})
	body := rec.Body.String()
	for _, link := range []string{`href="/"`, `href="/limiter"`, `href="/accounts"`, `href="/certs"`, `href="/orders"`, `href="/config" class="active" aria-current="page"`} {
		if !strings.Contains(body, link) {
			t.Errorf("menu lacks %s", link)
		}
	}
	if !strings.Contains(body, `action="/logout"`) {
		t.Error("no logout button")
	}
	s.cfg.Token, s.auth = "", newAuth("", nil, s.cfg.Now)
	rec = httptest.NewRecorder()
	s.render(rec, httptest.NewRequest(http.MethodGet, "/config", nil), http.StatusOK, "config", "Configuration", ConfigInfo{})
	if strings.Contains(rec.Body.String(), `action="/logout"`) {
		t.Error("a logout button without a token to log out of")
	}
}

func TestDashboardLoginPage(t *testing.T) {
	s := testServer(nil)
	rec := httptest.NewRecorder()
	s.renderLogin(rec, `<img src=x>`)
	body := rec.Body.String()
	if rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("content type %q", rec.Header().Get("Content-Type"))
	}
	if strings.Contains(body, "<img") || !strings.Contains(body, "&lt;img src=x&gt;") {
		t.Errorf("the message is not escaped:\n%s", body)
	}
	forms, _ := parseForms(t, body)
	if len(forms) != 1 || forms[0].method != "post" || forms[0].action != "/login" {
		t.Fatalf("forms %+v, want one POST to /login", forms)
	}
	if _, ok := forms[0].inputs["token"]; !ok || !strings.Contains(body, `type="password"`) {
		t.Error("no password field named token")
	}
	rec = httptest.NewRecorder()
	s.renderLogin(rec, "")
	if strings.Contains(rec.Body.String(), "login-error") {
		t.Error("an error box without a message")
	}
}

func TestDashboardFlash(t *testing.T) {
	s := testServer(nil)
	for _, tt := range []struct {
		msg   string
		isErr bool
	}{{"reset order-creation:1", false}, {`bad "key"; x=1, <b>ünï</b>`, true}, {strings.Repeat("x", 2000), false}} {
		rec := httptest.NewRecorder()
		s.setFlash(rec, httptest.NewRequest(http.MethodPost, "/limiter/reset", nil), tt.msg, tt.isErr)
		res := rec.Result()
		if len(res.Cookies()) != 1 {
			t.Fatalf("cookies %v", res.Cookies())
		}
		c := res.Cookies()[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
			t.Errorf("flash cookie %+v, want HttpOnly, SameSite=Strict, Path=/", c)
		}
		req := httptest.NewRequest(http.MethodGet, "/limiter", nil)
		req.AddCookie(c)
		rec = httptest.NewRecorder()
		f := s.takeFlash(rec, req)
		want := tt.msg
		if len(want) > 512 {
			want = want[:512]
		}
		if f == nil || f.Msg != want || f.Err != tt.isErr {
			t.Errorf("flash %+v, want %q err=%v", f, want, tt.isErr)
		}
		if cs := rec.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
			t.Errorf("the flash is not cleared after reading: %v", cs)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(&http.Cookie{Name: flashCookie, Value: "forged"})
	if f := s.takeFlash(httptest.NewRecorder(), req); f != nil {
		t.Errorf("a malformed flash cookie gave %+v", f)
	}
}

func TestDashboardLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "/def",
		"/limiter":                "/limiter",
		"/limiter?status=a%3Ab#x": "/limiter?status=a%3Ab#x",
		"//evil.example/":         "/def",
		"/\\evil.example":         "/def",
		"https://evil.example/":   "/def",
		"limiter":                 "/def",
		"/a\r\nSet-Cookie: x":     "/def",
	} {
		if got := localPath(in, "/def"); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDashboardPagingLinks(t *testing.T) {
	tests := []struct {
		url, next, wantNext, wantFirst string
	}{
		{"/accounts", "", "", ""},
		{"/accounts?q=x", "c1", "/accounts?cursor=c1&q=x", ""},
		{"/accounts?q=x&cursor=c1", "c2", "/accounts?cursor=c2&q=x", "/accounts?q=x"},
		{"/certs?cursor=c1", "", "", "/certs"},
	}
	for _, tt := range tests {
		next, first := pagingLinks(httptest.NewRequest(http.MethodGet, tt.url, nil), tt.next)
		if next != tt.wantNext || first != tt.wantFirst {
			t.Errorf("%s next %q: got %q, %q; want %q, %q", tt.url, tt.next, next, first, tt.wantNext, tt.wantFirst)
		}
	}
}

func TestDashboardStatic(t *testing.T) {
	s := testServer(nil)
	r := chi.NewRouter()
	r.Get("/static/*", s.serveStatic)
	for _, tt := range []struct {
		path   string
		status int
		ctype  string
	}{
		{"/static/weir.css", 200, "text/css; charset=utf-8"},
		{"/static/favicon.svg", 200, "image/svg+xml"},
		{"/static/", 404, ""},
		{"/static/nope.css", 404, ""},
		{"/static/../dashboard.go", 404, ""},
		{"/static/%2e%2e/templates/login.html", 404, ""},
	} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != tt.status || (tt.ctype != "" && rec.Header().Get("Content-Type") != tt.ctype) {
			t.Errorf("GET %s: %d %q, want %d %q", tt.path, rec.Code, rec.Header().Get("Content-Type"), tt.status, tt.ctype)
		}
		if tt.status == 200 && rec.Body.Len() == 0 {
			t.Errorf("GET %s: empty", tt.path)
		}
	}
}

// TestDashboardErrors: the error page maps errors as the API does, and an
// internal error shows nothing of its cause (which goes to the log).
func TestDashboardErrors(t *testing.T) {
	tests := []struct {
		err      error
		status   int
		msg      string
		logged   bool
		flash    bool // as the outcome of a form
		redirect bool
	}{
		{badRequest("name exactly one of account, ip or key"), 400, "name exactly one of account, ip or key", false, true, true},
		{&apiError{status: 404, msg: "account 9 does not exist"}, 404, "account 9 does not exist", false, true, true},
		{acme.NewProblem(acme.ProbAlreadyRevoked, "certificate 0a is already revoked"), 400, "certificate 0a is already revoked", false, true, true},
		{fmt.Errorf("wrapped: %w", acme.Malformed("bad")), 400, "bad", false, true, true},
		{acme.Internal(errors.New("disk on fire")), 500, "internal error; see the server log", true, false, false},
		{errors.New("sqlite: secret path /var/lib/weir"), 500, "internal error; see the server log", true, false, false},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		s := testServer(&logs)
		rec := httptest.NewRecorder()
		s.failPage(rec, httptest.NewRequest(http.MethodGet, "/accounts/9", nil), tt.err)
		body := rec.Body.String()
		if rec.Code != tt.status || !strings.Contains(body, html.EscapeString(tt.msg)) {
			t.Errorf("%v: status %d, want %d with %q:\n%s", tt.err, rec.Code, tt.status, tt.msg, body)
		}
		if strings.Contains(body, "disk on fire") || strings.Contains(body, "/var/lib/weir") {
			t.Errorf("%v: the cause leaks into the page", tt.err)
		}
		if got := logs.Len() > 0; got != tt.logged {
			t.Errorf("%v: logged = %v, want %v", tt.err, got, tt.logged)
		}

		rec = httptest.NewRecorder()
		s.afterPost(rec, httptest.NewRequest(http.MethodPost, "/limiter/reset", nil), "/limiter", "done", tt.err)
		if got := rec.Code == http.StatusSeeOther; got != tt.redirect {
			t.Errorf("%v after a form: status %d, want a redirect = %v", tt.err, rec.Code, tt.redirect)
		}
		if tt.redirect && rec.Header().Get("Location") != "/limiter" {
			t.Errorf("%v after a form: Location %q", tt.err, rec.Header().Get("Location"))
		}
	}
}

func TestNormalizeSerial(t *testing.T) {
	for in, want := range map[string]string{
		"aa752632833ec2b6805eef1f0e9511a":  "0aa752632833ec2b6805eef1f0e9511a",
		"0AA752632833EC2B6805EEF1F0E9511A": "0aa752632833ec2b6805eef1f0e9511a",
		"0a:a7:52":                         "0aa752",
		" 01 ":                             "01",
		"not-hex":                          "not-hex",
	} {
		if got := normalizeSerial(in); got != want {
			t.Errorf("normalizeSerial(%q) = %q, want %q", in, got, want)
		}
	}
}
