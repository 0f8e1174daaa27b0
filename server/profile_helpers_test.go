// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto"
	"encoding/json"
	"maps"
	"net"
	"net/http"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
)

// The hand-made orders of server's tests (certificate profiles' end-to-end
// test is test/system's profiles_test.go).

// orderJSON is the part of an order resource the tests read.
type orderJSON struct {
	Status         string        `json:"status"`
	Profile        string        `json:"profile"`
	Authorizations []string      `json:"authorizations"`
	Finalize       string        `json:"finalize"`
	Error          *acme.Problem `json:"error"`
	Certificate    string        `json:"certificate"`
}

// profileOrder sends a hand-made new-order with a profile (x/crypto/acme
// cannot send one); extra fields go into the payload too.
func (e *testEnv) profileOrder(key crypto.Signer, kid, profile string, extra map[string]any, names ...string) acmeenv.Response {
	e.t.Helper()
	var ids []acme.Identifier
	for _, n := range names {
		if net.ParseIP(n) != nil {
			ids = append(ids, acme.Identifier{Type: acme.IdentifierIP, Value: n})
		} else {
			ids = append(ids, acme.Identifier{Type: acme.IdentifierDNS, Value: n})
		}
	}
	payload := map[string]any{"identifiers": ids}
	if profile != "" {
		payload["profile"] = profile
	}
	maps.Copy(payload, extra)
	b, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.PostJWS(key, e.Base+"/acme/new-order", b, acmeenv.SignOpts{KID: kid})
}

// readyProfileOrder creates an order under profile by hand and solves its
// authorizations with http-01 through x/crypto/acme; it returns the order
// URL and resource once ready.
func (e *testEnv) readyProfileOrder(ctx context.Context, c *xacme.Client, kid, profile string, names ...string) (string, orderJSON) {
	e.t.Helper()
	res := e.profileOrder(c.Key, kid, profile, nil, names...)
	acmeenv.WantStatus(e.t, res, http.StatusCreated)
	var o orderJSON
	if err := json.Unmarshal(res.Body, &o); err != nil {
		e.t.Fatal(err)
	}
	for _, u := range o.Authorizations {
		e.Solve(ctx, c, u, "http-01")
	}
	url := res.Header.Get("Location")
	if _, err := c.WaitOrder(ctx, url); err != nil {
		e.t.Fatalf("wait order: %v", err)
	}
	return url, o
}

// getOrder fetches an order resource with POST-as-GET.
func (e *testEnv) getOrder(key crypto.Signer, kid, url string) orderJSON {
	e.t.Helper()
	res := e.PostJWS(key, url, []byte{}, acmeenv.SignOpts{KID: kid})
	acmeenv.WantStatus(e.t, res, http.StatusOK)
	var o orderJSON
	if err := json.Unmarshal(res.Body, &o); err != nil {
		e.t.Fatal(err)
	}
	return o
}
