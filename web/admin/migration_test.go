// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/sqlite"
)

// noValidation is a Validator never asked: the tests below validate
// nothing.
type noValidation struct{}

func (noValidation) Validate(context.Context, acme.ValidationRequest) *acme.Problem { return nil }

// migrationEnv is an admin Server over a real Service on SQLite with two
// issuers, default (renew-early) and r2 (active), at testNow.
type migrationEnv struct {
	h       http.Handler
	metrics *Metrics
	store   *sqlite.Store
	keys    map[string][]byte // each issuer's key identifier
	acct    *acme.Account
	n       int
	read    string // a read credential's token
}

func newMigrationEnv(t *testing.T) *migrationEnv {
	t.Helper()
	now := func() time.Time { return testNow }
	e := &migrationEnv{store: openCredentialStore(t), metrics: NewMetrics(MetricsOptions{Now: now}), keys: map[string][]byte{}}
	cas := map[string]*ca.CA{}
	var issuers []acme.Issuer
	for _, id := range []string{acme.DefaultIssuer, "r2"} {
		h, err := ca.GenerateHierarchy("migration "+id, testNow.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if cas[id], err = ca.New(ca.Config{Lifetime: time.Hour}, h, nil); err != nil {
			t.Fatal(err)
		}
		e.keys[id] = h.Intermediate.SubjectKeyId
		issuers = append(issuers, acme.Issuer{ID: id, CA: cas[id]})
	}
	policy, err := acme.NewPolicy(acme.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := acme.New(acme.Config{}, acme.Live{Policy: policy, RenewEarly: []string{acme.DefaultIssuer}}, acme.Deps{Store: e.store,
		CA: cas["r2"], Issuers: issuers, Validator: noValidation{}, Observer: e.metrics, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	creds := NewCredentialSet(e.store, now)
	if err := creds.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: testToken, Credentials: creds, Hosts: []string{"example.com"}, Service: svc, Limits: &limits.Adapter{},
		Metrics: e.metrics, Config: func() ConfigInfo { return ConfigInfo{} }, Now: now,
		Health: http.NotFoundHandler(), Ready: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := creds.Add(t.Context(), "viewer", RoleRead, RootName)
	if err != nil {
		t.Fatal(err)
	}
	e.h, e.read = s.Handler(), rd.Token
	e.acct = &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb", Status: acme.StatusValid, CreatedAt: testNow.Add(-time.Hour)}
	if err := e.store.CreateAccount(t.Context(), e.acct); err != nil {
		t.Fatal(err)
	}
	return e
}

// issue stores a certificate of issuer expiring expires after testNow,
// whose window ended ended after testNow, issued issued after it; it
// replaces the certificate of serial replaces ("": none). It returns
// the new certificate's serial.
func (e *migrationEnv) issue(t *testing.T, issuer string, expires, ended, issued time.Duration, replaces string) string {
	t.Helper()
	e.n++
	ctx := t.Context()
	o := &acme.Order{ID: acme.OrderID(fmt.Sprintf("order-%d", e.n)), AccountID: e.acct.ID, Status: acme.StatusPending,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: fmt.Sprintf("h%d.example", e.n)}},
		Expires:     testNow.Add(time.Hour), CreatedAt: testNow.Add(issued)}
	if replaces != "" {
		part, _ := acme.CertIDSerialPart(replaces)
		o.Replaces = acme.CertIDPrefix(e.keys[acme.DefaultIssuer]) + part
	}
	if err := e.store.CreateOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	o.Status = acme.StatusProcessing
	if err := e.store.UpdateOrder(ctx, o, acme.StatusPending); err != nil {
		t.Fatal(err)
	}
	serial := fmt.Sprintf("%02x%06x", 0x80+e.n, e.n)
	c := &acme.Certificate{Serial: serial, AccountID: e.acct.ID, OrderID: o.ID, DER: []byte("der"), Names: []string{o.Identifiers[0].Value},
		NotBefore: testNow.Add(issued), NotAfter: testNow.Add(expires), IssuedAt: testNow.Add(issued),
		RenewalStart: testNow.Add(ended - time.Hour), RenewalEnd: testNow.Add(ended), Issuer: issuer}
	if err := e.store.FinalizeOrder(ctx, c); err != nil {
		t.Fatal(err)
	}
	return serial
}

// get sends a GET of path with the read credential.
func (e *migrationEnv) get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("Authorization", "Bearer "+e.read)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec
}

// deny records a 429 of action by limit at testNow+at.
func (e *migrationEnv) deny(action string, limit ratelimit.Name, at time.Duration) {
	d := ratelimit.Decision{Limit: limit, Key: "1", RetryAfter: time.Minute, At: testNow.Add(at)}
	e.metrics.Limiter(acme.LimiterEvent{Action: action, Requests: []ratelimit.Request{{Name: limit, Key: "1"}}, Decision: d})
}

// TestMigrationAPI: GET /api/v1/ca/migration, with the read role, is the
// view of the store's certificates: default being left (renew-early), one
// of its four live certificates renewed off in the window and one before,
// one overdue; r2 active; and the one 429 a renewal could have had.
func TestMigrationAPI(t *testing.T) {
	e := newMigrationEnv(t)
	const day = 24 * time.Hour
	a1 := e.issue(t, acme.DefaultIssuer, 30*day, day, -60*day, "")
	a2 := e.issue(t, acme.DefaultIssuer, 40*day, day, -50*day, "")
	e.issue(t, acme.DefaultIssuer, 20*day, -day, -70*day, "")       // overdue
	e.issue(t, acme.DefaultIssuer, 60*day, 2*day, -30*day, "")      // the last to expire
	e.issue(t, acme.DefaultIssuer, -day, -20*day, -91*day, "")      // expired
	e.issue(t, "r2", 90*day, 60*day, -time.Minute, a1)              // renewed off now
	e.issue(t, "r2", 89*day, 59*day, -2*time.Hour, a2)              // and before the window
	e.issue(t, "r2", 90*day, 60*day, -30*time.Second, "")           // a new one
	e.deny("new-order", ratelimit.SANBudget, -time.Minute)          // a renewal pays san-budget
	e.deny("new-order", ratelimit.OrderCreation, -time.Minute)      // renewals are exempt
	e.deny("finalize", ratelimit.RegisteredDomain, -10*time.Minute) // before the window
	e.deny("new-account", ratelimit.AccountCreation, -time.Minute)

	rec := e.get(t, "/api/v1/ca/migration")
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	// The shape: these members and no other.
	var shape struct {
		Top     map[string]json.RawMessage
		Issuers []map[string]json.RawMessage `json:"issuers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &shape.Top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &shape); err != nil {
		t.Fatal(err)
	}
	wantKeys := func(what string, m map[string]json.RawMessage, want ...string) {
		t.Helper()
		var got []string
		for k := range m {
			got = append(got, k)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s members %v, want %v", what, got, want)
		}
	}
	wantKeys("the view", shape.Top, "at", "window", "issuers", "refused", "plan")
	if string(shape.Top["plan"]) != "null" {
		t.Errorf("plan %s with planning off, want null", shape.Top["plan"])
	}
	for _, is := range shape.Issuers {
		wantKeys("an issuer", is, "id", "active", "renew_early", "leaving", "live", "share", "replaced", "remaining", "overdue",
			"issued", "renewed_off", "rate_per_hour", "first_expiry", "last_expiry", "projected_empty_at")
	}

	var st acme.MigrationStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if !st.At.Equal(testNow) || st.Window != "5m0s" || len(st.Issuers) != 2 {
		t.Fatalf("view %s", rec.Body)
	}
	if st.Refused == nil || *st.Refused != (acme.RefusedRenewals{Denials: 1, Complete: true}) {
		t.Errorf("refused %+v, want 1 (the san-budget 429 of new-order), complete", st.Refused)
	}
	old, cur := st.Issuers[0], st.Issuers[1]
	if old.ID != acme.DefaultIssuer || old.Active || !old.RenewEarly || !old.Leaving || old.Live != 4 || old.Replaced != 2 || old.Remaining != 2 ||
		old.Overdue != 1 || old.Issued != 0 || old.RenewedOff != 1 || old.RatePerHour != 12 || old.Share != 4.0/7 {
		t.Errorf("default: %+v", old)
	}
	if old.FirstExpiry == nil || !old.FirstExpiry.Equal(testNow.Add(20*day)) || old.LastExpiry == nil || !old.LastExpiry.Equal(testNow.Add(60*day)) {
		t.Errorf("default expires from %v to %v, want +20d to +60d", old.FirstExpiry, old.LastExpiry)
	}
	// Two remain, one left in five minutes: ten minutes.
	if old.ProjectedEmptyAt == nil || !old.ProjectedEmptyAt.Equal(testNow.Add(10*time.Minute)) {
		t.Errorf("default projected empty at %v, want in 10 minutes", old.ProjectedEmptyAt)
	}
	if cur.ID != "r2" || !cur.Active || cur.RenewEarly || cur.Leaving || cur.Live != 3 || cur.Replaced != 0 || cur.Issued != 2 ||
		cur.RenewedOff != 0 || cur.Overdue != 0 || cur.ProjectedEmptyAt != nil || cur.LastExpiry == nil || !cur.LastExpiry.Equal(testNow.Add(90*day)) {
		t.Errorf("r2: %+v", cur)
	}

	// The page shows the same, with the bar of the shares.
	body := e.get(t, "/migration").Body.String()
	for _, want := range []string{
		`<tr id="migration-default">`, `<tr id="migration-r2">`,
		`<td class="num">4</td>`, `<td class="num">57.1 %</td>`, `<td class="num">42.9 %</td>`, `<td class="num">12/h</td>`,
		`<rect x="0.00" width="342.86"`, `<rect x="342.86" width="257.14"`, "default: 4 live (57.1 %)",
		`<strong id="migration-refused-count">1</strong>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !strings.Contains(body, formatTime(testNow.Add(10*time.Minute))+` <span class="muted">(in 10m0s)</span>`) {
		t.Errorf("the page lacks default's projected time in 10 minutes")
	}
	parseForms(t, body)
}

// TestMigrationPage: the page of a view without a record of refusals,
// with one whose record is incomplete, and of an issuer with no live
// certificate.
func TestMigrationPage(t *testing.T) {
	last := testNow.Add(time.Hour)
	view := &acme.MigrationStatus{At: testNow, Window: "5m0s", Issuers: []acme.IssuerMigration{
		{ID: "old-<b>", Leaving: true},
		{ID: "r2", Active: true, Live: 5, Share: 1, Remaining: 5, Overdue: 3, LastExpiry: &last, FirstExpiry: &last},
	}}
	render := func(v *acme.MigrationStatus) string {
		t.Helper()
		var logs bytes.Buffer
		s := testServer(&logs)
		rec := httptest.NewRecorder()
		s.render(rec, sessionRequest("/migration"), http.StatusOK, "migration", "Issuer migration",
			migrationPage{Status: v, Bar: shareBar(v.Issuers), Rows: []migrationRow{{IssuerMigration: v.Issuers[0], Swatch: swatch(0), SharePct: "0.0 %"},
				{IssuerMigration: v.Issuers[1], Swatch: swatch(1), SharePct: "100.0 %"}}})
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d; log %s", rec.Code, logs.String())
		}
		parseForms(t, rec.Body.String())
		return rec.Body.String()
	}
	body := render(view)
	for _, want := range []string{"This replica keeps no record of refusals.", "old-&lt;b&gt;", `<rect x="0.00" width="600.00"`,
		"r2: 5 live (100.0 %)", `aria-current="page">Migration</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// r2 is active: its overdue is not a migration's; old has nothing live.
	if strings.Contains(body, "<b>") || strings.Contains(body, `<td class="num">3</td>`) || strings.Count(body, `<span class="muted">—</span>`) != 3 {
		t.Errorf("the page shows an active issuer's overdue, or dates of nothing:\n%s", body)
	}
	view.Refused = &acme.RefusedRenewals{Denials: 256}
	if body := render(view); !strings.Contains(body, `<strong id="migration-refused-count">256</strong>`) || !strings.Contains(body, "incomplete") {
		t.Errorf("an incomplete record of refusals is not said so")
	}
	if !strings.Contains(body, "Renewal planning is off") {
		t.Errorf("the page does not say planning is off")
	}
	// The plan over the ceiling and over an account's budget, then within.
	peak := testNow.Add(6 * time.Minute)
	view.Plan = &renewal.Capacity{Slot: "1m0s", Loaded: true, CeilingPerHour: 600, PeakPerHour: 17140.4, PeakAt: &peak, SlotsOver: 9, OverFrom: &peak,
		AccountsOver: 1, Accounts: []renewal.AccountCapacity{{Account: "7", PeakPerHour: 430, PeakAt: peak, HeadroomPerHour: 42.9}}, PlacedOverCeiling: 5, PlacedOverAccount: 3}
	body = render(view)
	for _, want := range []string{`id="migration-plan-warning"`, "<strong>17140</strong> renewals an hour", "max-renewals-per-hour</code> 600 in 9 slots of 1m0s",
		"1 accounts will ask for more renewals", `<td><a href="/accounts/7">7</a></td><td class="num">430.0</td>`, `<td class="num">42.9</td>`,
		"placed 5 windows over the ceiling and 3 over"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page over capacity lacks %q", want)
		}
	}
	view.Plan = &renewal.Capacity{Slot: "1h0m0s", CeilingPerHour: 600, PeakPerHour: 120, PeakAt: &peak}
	body = render(view)
	if !strings.Contains(body, `id="migration-plan-ok"`) || !strings.Contains(body, "expects 120 renewals an hour") ||
		strings.Contains(body, "migration-plan-warning") || !strings.Contains(body, "Not yet rebuilt") {
		t.Errorf("the page within capacity, before a rebuild:\n%s", body)
	}
}

// TestRenewalRefusals: the denials of new-order and finalize since a time
// by a limit renewals pay; complete while the ring reaches back to it.
func TestRenewalRefusals(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(renewalLimits)), []string{"failed-validation", "pending-authorizations", "registered-domain", "san-budget"}; !slices.Equal(got, want) {
		t.Errorf("renewalLimits %v, want %v", got, want)
	}
	m := NewMetrics(MetricsOptions{})
	since := activityT0.Add(time.Hour)
	push := func(action string, limit ratelimit.Name, at time.Time) {
		m.Limiter(acme.LimiterEvent{Action: action, Requests: []ratelimit.Request{{Name: limit, Key: "k"}},
			Decision: ratelimit.Decision{Limit: limit, Key: "k", At: at}})
	}
	push("new-order", ratelimit.SANBudget, since.Add(-time.Second))
	push("new-order", ratelimit.SANBudget, since)
	push("finalize", ratelimit.RegisteredDomain, since.Add(time.Second))
	push("new-order", ratelimit.DuplicateCertificate, since.Add(time.Second))
	push("new-account", ratelimit.AccountCreation, since.Add(time.Second))
	if got := m.RenewalRefusals(since); got != (acme.RefusedRenewals{Denials: 2, Complete: true}) {
		t.Errorf("RenewalRefusals = %+v, want 2, complete", got)
	}
	for i := range recentDenials {
		push("new-order", ratelimit.FailedValidation, since.Add(time.Duration(i)*time.Millisecond))
	}
	if got := m.RenewalRefusals(since); got != (acme.RefusedRenewals{Denials: recentDenials}) {
		t.Errorf("RenewalRefusals of a full ring = %+v, want %d, incomplete", got, recentDenials)
	}
	if got := m.RenewalRefusals(since.Add(100 * time.Millisecond)); got != (acme.RefusedRenewals{Denials: recentDenials - 100, Complete: true}) {
		t.Errorf("RenewalRefusals since after the oldest kept = %+v, want %d, complete", got, recentDenials-100)
	}
}
