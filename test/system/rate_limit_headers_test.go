// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// rateLimitItem is the one Item of a RateLimit or RateLimit-Policy field
// (draft-ietf-httpapi-ratelimit-headers-11): the policy name and its
// integer parameters.
type rateLimitItem struct {
	name   string
	params map[string]int64
}

// parseRateLimitField parses a field value of one Item with integer
// parameters, such as `"order-creation";r=2;t=3600`; ok is false when the
// field is absent or malformed.
func parseRateLimitField(v string) (rateLimitItem, bool) {
	parts := strings.Split(v, ";")
	if len(parts) < 2 || len(parts[0]) < 3 || !strings.HasPrefix(parts[0], `"`) || !strings.HasSuffix(parts[0], `"`) {
		return rateLimitItem{}, false
	}
	it := rateLimitItem{name: parts[0][1 : len(parts[0])-1], params: map[string]int64{}}
	for _, p := range parts[1:] {
		k, val, ok := strings.Cut(p, "=")
		n, err := strconv.ParseInt(val, 10, 64)
		if !ok || err != nil {
			return rateLimitItem{}, false
		}
		it.params[k] = n
	}
	return it, true
}

// rateLimitFields returns the parsed RateLimit-Policy and RateLimit
// fields of res, failing t unless both are there and name the same
// policy.
func rateLimitFields(t *testing.T, what string, res acmeenv.Response) (policy, limit rateLimitItem) {
	t.Helper()
	pv, lv := res.Header.Values("RateLimit-Policy"), res.Header.Values("RateLimit")
	if len(pv) != 1 || len(lv) != 1 {
		t.Fatalf("%s: RateLimit-Policy %q, RateLimit %q: want one of each", what, pv, lv)
	}
	policy, ok1 := parseRateLimitField(pv[0])
	limit, ok2 := parseRateLimitField(lv[0])
	if !ok1 || !ok2 || policy.name != limit.name {
		t.Fatalf("%s: malformed RateLimit-Policy %q / RateLimit %q", what, pv[0], lv[0])
	}
	return policy, limit
}

// noRateLimitFields fails t if res carries either RateLimit field.
func noRateLimitFields(t *testing.T, what string, res acmeenv.Response) {
	t.Helper()
	if v := res.Header.Values("RateLimit-Policy"); len(v) > 0 {
		t.Errorf("%s: RateLimit-Policy %q on a response to an unauthenticated request", what, v)
	}
	if v := res.Header.Values("RateLimit"); len(v) > 0 {
		t.Errorf("%s: RateLimit %q on a response to an unauthenticated request", what, v)
	}
}

// wantWithin fails t unless lo <= got <= hi.
func wantWithin(t *testing.T, what string, got, lo, hi int64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %d, want %d..%d", what, got, lo, hi)
	}
}

// postAsGet fetches url with a POST-as-GET (an empty payload, RFC 8555
// §6.3) signed by key with the account URL kid; kid "" embeds the JWK.
func (e *env) postAsGet(key *ecdsa.PrivateKey, kid, url string) acmeenv.Response {
	e.t.Helper()
	hdr := map[string]any{"alg": "ES256", "nonce": e.Nonce(), "url": url}
	if kid != "" {
		hdr["kid"] = kid
	} else {
		hdr["jwk"] = acmeenv.PublicJWK(e.t, key.Public())
	}
	return e.Post(url, "application/jose+json", acmeenv.MarshalJSON(e.t, acmeenv.HandSignedJWS(e.t, key, hdr, nil)))
}

// TestRateLimitHeaders: the RateLimit fields follow the order-creation
// bucket (1 per hour, burst 3) as it drains: r = 3 before any order, then
// 2, 1, 0, then a 429 whose effective window is its Retry-After; another
// authenticated request shows the bucket too; unauthenticated ones carry
// no fields.
func TestRateLimitHeaders(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 1, OrderBurst: 3, SANBudgetPerAccountPerHour: 100}
	})
	const T = 3600 // the emission interval in seconds: one order an hour

	// Unauthenticated requests: no fields.
	noRateLimitFields(t, "directory", e.Get(t, e.Base+"/directory"))
	noRateLimitFields(t, "new-nonce", e.Post(e.Base+"/acme/new-nonce", "", nil))
	key := acmeenv.NewKey(t)
	res, kid := e.RawAccount(key)
	acmeenv.WantStatus(t, res, http.StatusCreated)
	noRateLimitFields(t, "new-account (signed with a JWK)", res)
	id := strings.TrimPrefix(kid, e.Base+"/acme/account/")

	wantPolicy := func(what string, p rateLimitItem) {
		t.Helper()
		if p.name != "order-creation" || p.params["q"] != 3 || p.params["w"] != 3*T {
			t.Errorf("%s: RateLimit-Policy %+v, want \"order-creation\";q=3;w=%d", what, p, 3*T)
		}
	}

	// Before any order: a full bucket, whole again at once.
	res = e.postAsGet(key, kid, kid)
	acmeenv.WantStatus(t, res, http.StatusOK)
	p, l := rateLimitFields(t, "account before any order", res)
	wantPolicy("account before any order", p)
	if l.params["r"] != 3 || l.params["t"] != 0 {
		t.Errorf("account before any order: RateLimit %+v, want r=3;t=0", l)
	}

	// Each order takes a token. While some are left, t is the time until
	// the bucket is full again (1, 2 hours); with none left, the time until
	// the next token (1 hour). The test allows a few seconds of slowness.
	for i, want := range []struct{ r, t int64 }{{2, T}, {1, 2 * T}, {0, T}} {
		res := e.RawOrder(key, kid, "q"+strconv.Itoa(i)+".weir.test")
		acmeenv.WantStatus(t, res, http.StatusCreated)
		what := "order " + strconv.Itoa(i+1)
		p, l := rateLimitFields(t, what, res)
		wantPolicy(what, p)
		if l.params["r"] != want.r {
			t.Errorf("%s: r = %d, want %d", what, l.params["r"], want.r)
		}
		wantWithin(t, what+": t", l.params["t"], want.t-5, want.t)
	}

	// The fourth is refused: r = 0 and t is exactly the Retry-After.
	res = e.RawOrder(key, kid, "q3.weir.test")
	ra := acmeenv.Want429(t, res, "order-creation", id)
	p, l = rateLimitFields(t, "the 429", res)
	wantPolicy("the 429", p)
	if l.params["r"] != 0 || l.params["t"] != int64(ra) {
		t.Errorf("the 429: RateLimit %+v, want r=0;t=%d (the Retry-After)", l, ra)
	}
	wantWithin(t, "the 429's Retry-After", int64(ra), T-5, T)

	// The problem document names the bucket, what is left, the limit as
	// RateLimit-Policy says it (quota and window: q and w) with the
	// configured rate (count per period), and when it frees up.
	var prob struct {
		Type      string
		Limit     string
		Key       string
		Remaining *int64
		Quota     int64
		Window    int64
		Count     int64
		Period    int64
		FreesAt   time.Time
	}
	if err := json.Unmarshal(res.Body, &prob); err != nil {
		t.Fatal(err)
	}
	if prob.Limit != "order-creation" || prob.Key != id || prob.Remaining == nil || *prob.Remaining != 0 ||
		prob.Quota != p.params["q"] || prob.Window != p.params["w"] || prob.Count != 1 || prob.Period != T {
		t.Errorf("429 members = %+v, want limit order-creation, key %s, remaining 0, quota %d and window %d as RateLimit-Policy, count 1 per period %d:\n%s",
			prob, id, p.params["q"], p.params["w"], T, res.Body)
	}
	if d := time.Until(prob.FreesAt); d < time.Duration(ra-10)*time.Second || d > time.Duration(ra+1)*time.Second {
		t.Errorf("freesAt %v is %v away, want about the Retry-After (%d s)", prob.FreesAt, d, ra)
	}

	// Another authenticated request reads the bucket without spending:
	// still empty, the next token an hour away.
	for range 2 {
		res = e.postAsGet(key, kid, kid)
		acmeenv.WantStatus(t, res, http.StatusOK)
		p, l = rateLimitFields(t, "account after the 429", res)
		wantPolicy("account after the 429", p)
		if l.params["r"] != 0 {
			t.Errorf("account after the 429: r = %d, want 0", l.params["r"])
		}
		wantWithin(t, "account after the 429: t", l.params["t"], T-10, T)
	}
	// A refused request that spent nothing (a malformed new-order) still
	// shows the bucket.
	res = e.PostJWS(key, e.Base+"/acme/new-order", []byte(`{"identifiers":[]}`), acmeenv.SignOpts{KID: kid})
	acmeenv.WantStatus(t, res, http.StatusBadRequest)
	if _, l := rateLimitFields(t, "malformed new-order", res); l.params["r"] != 0 {
		t.Errorf("malformed new-order: r = %d, want 0", l.params["r"])
	}
}

// TestRateLimitedProblemMembers: a new order for two names whose
// validations failed is refused by failed-validation with a subproblem
// per name, each naming its identifier and bucket.
func TestRateLimitedProblemMembers(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.FailedValidation = ratelimit.WindowConfig{Enabled: true, MaxPerWindow: 1, Window: time.Hour}
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	key := acmeenv.NewKey(t)
	c := e.Client(key)
	acct, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimPrefix(acct.URI, e.Base+"/acme/account/")
	names := []string{"fa.weir.test", "fb.weir.test"}
	o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(names...))
	if err != nil {
		t.Fatal(err)
	}
	// No http-01 response is served: both validations fail.
	for _, u := range o.AuthzURLs {
		a, err := c.GetAuthorization(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range a.Challenges {
			if ch.Type == "http-01" {
				if _, err := c.Accept(ctx, ch); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, u := range o.AuthzURLs {
		if _, err := c.WaitAuthorization(ctx, u); err == nil {
			t.Fatal("validation passed; want it to fail")
		}
	}

	res := e.RawOrder(key, acct.URI, names...)
	ra := acmeenv.Want429(t, res, "failed-validation", id+":f")
	type member struct {
		Type       string
		Status     int
		Identifier *struct{ Type, Value string }
		Limit      string
		Key        string
		Remaining  *int64
		Window     int64
		FreesAt    time.Time
	}
	var prob struct {
		member
		Subproblems []member
	}
	if err := json.Unmarshal(res.Body, &prob); err != nil {
		t.Fatal(err)
	}
	if prob.Limit != "failed-validation" || !strings.HasPrefix(prob.Key, id+":f") || prob.Remaining == nil || *prob.Remaining != 0 || prob.Window != 3600 || prob.FreesAt.IsZero() {
		t.Errorf("429 members = %+v, want the failed-validation bucket of one name:\n%s", prob.member, res.Body)
	}
	if len(prob.Subproblems) != len(names) {
		t.Fatalf("%d subproblems, want one per name:\n%s", len(prob.Subproblems), res.Body)
	}
	var got []string
	for _, sp := range prob.Subproblems {
		if sp.Identifier == nil || sp.Identifier.Type != "dns" {
			t.Fatalf("subproblem without a dns identifier: %+v\n%s", sp, res.Body)
		}
		got = append(got, sp.Identifier.Value)
		if sp.Type != "urn:ietf:params:acme:error:rateLimited" || sp.Status != http.StatusTooManyRequests ||
			sp.Limit != "failed-validation" || sp.Key != id+":"+sp.Identifier.Value ||
			sp.Remaining == nil || *sp.Remaining != 0 || sp.Window != 3600 || sp.FreesAt.IsZero() {
			t.Errorf("subproblem %+v does not name its failed-validation bucket", sp)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, names) {
		t.Errorf("subproblem identifiers %v, want %v", got, names)
	}
	// The fields describe the refusing bucket, consistent with Retry-After.
	p, l := rateLimitFields(t, "failed-validation 429", res)
	if p.name != "failed-validation" || p.params["q"] != 1 || p.params["w"] != 3600 || l.params["r"] != 0 || l.params["t"] != int64(ra) {
		t.Errorf("RateLimit-Policy %+v, RateLimit %+v: want failed-validation q=1 w=3600, r=0 t=%d", p, l, ra)
	}
}

// TestQuotaResource: the directory advertises meta.quota, and the quota
// resource lists the signing account's buckets as "weir ratelimit status
// --account ID --json" does, bucket by bucket.
func TestQuotaResource(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 2, OrderBurst: 4, SANBudgetPerAccountPerHour: 100}
		c.RateLimiting.PendingAuthorizations = ratelimit.PendingConfig{Enabled: true, Max: 30}
		c.RateLimiting.FailedValidation = ratelimit.WindowConfig{Enabled: true, MaxPerWindow: 3, Window: time.Hour}
	})
	var dir struct{ Meta struct{ Quota string } }
	if err := json.Unmarshal(e.Get(t, e.Base+"/directory").Body, &dir); err != nil {
		t.Fatal(err)
	}
	if dir.Meta.Quota != e.Base+"/acme/quota" {
		t.Fatalf("meta.quota = %q, want %s/acme/quota", dir.Meta.Quota, e.Base)
	}
	key := acmeenv.NewKey(t)
	_, kid := e.RawAccount(key)
	id := strings.TrimPrefix(kid, e.Base+"/acme/account/")
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "qa.weir.test", "qb.weir.test"), http.StatusCreated)
	acmeenv.WantStatus(t, e.RawOrder(key, kid, "qc.weir.test"), http.StatusCreated)

	// The quota resource needs POST-as-GET signed with the account's kid.
	res := e.PostJWS(key, dir.Meta.Quota, []byte(`{}`), acmeenv.SignOpts{KID: kid})
	acmeenv.WantStatus(t, res, http.StatusBadRequest)
	res = e.postAsGet(key, "", dir.Meta.Quota)
	acmeenv.WantStatus(t, res, http.StatusBadRequest)

	res = e.postAsGet(key, kid, dir.Meta.Quota)
	acmeenv.WantStatus(t, res, http.StatusOK)
	rateLimitFields(t, "quota resource", res)
	var quota struct {
		Account string
		Buckets []struct {
			Bucket, Limit, Key  string
			Enabled             bool
			Capacity, Remaining int64
			Window              int64
			NextAt, FullAt, At  string
		}
	}
	if err := json.Unmarshal(res.Body, &quota); err != nil {
		t.Fatal(err)
	}
	if quota.Account != kid {
		t.Errorf("account = %q, want %q", quota.Account, kid)
	}
	var st struct{ Buckets []admin.BucketView }
	e.cli.JSON(t, &st, "ratelimit", "status", "--account", id)
	if len(quota.Buckets) != len(st.Buckets) {
		t.Fatalf("quota resource has %d buckets, ratelimit status %d:\n%s\n%+v", len(quota.Buckets), len(st.Buckets), res.Body, st.Buckets)
	}
	for i, b := range quota.Buckets {
		j := slices.IndexFunc(st.Buckets, func(v admin.BucketView) bool { return v.Bucket == b.Bucket })
		if j < 0 {
			t.Fatalf("no bucket %s in %+v", b.Bucket, st.Buckets)
		}
		want := st.Buckets[j]
		if b.Limit != want.Limit || b.Key != want.Key || b.Enabled != want.Enabled || b.Capacity != want.Capacity || b.Remaining != want.Remaining {
			t.Errorf("bucket %d: quota %+v, ratelimit status %+v", i, b, want)
		}
	}
	// And the numbers are the spend: 2 of 4 orders, 3 of 100 names, 3 of
	// 30 pending authorizations.
	for bucket, want := range map[string][2]int64{
		"order-creation:" + id: {2, 4}, "san-budget:" + id: {97, 100}, "pending-authorizations:" + id: {27, 30},
		"failed-validation:" + id + ":qa.weir.test": {3, 3},
	} {
		found := false
		for _, b := range quota.Buckets {
			if b.Bucket == bucket {
				found = true
				if b.Remaining != want[0] || b.Capacity != want[1] {
					t.Errorf("%s = %d/%d, want %d/%d", bucket, b.Remaining, b.Capacity, want[0], want[1])
				}
			}
		}
		if !found {
			t.Errorf("no bucket %s in the quota resource:\n%s", bucket, res.Body)
		}
	}
}
