// SPDX-License-Identifier: Apache-2.0

package system

import (
	"testing"

	xacme "golang.org/x/crypto/acme"
)

// readyOrder makes an order of c for names and solves it to ready.
func (e *env) readyOrder(t *testing.T, c *xacme.Client, names ...string) *xacme.Order {
	t.Helper()
	o, err := c.AuthorizeOrder(t.Context(), xacme.DomainIDs(names...))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range o.AuthzURLs {
		e.Solve(t.Context(), c, u, "http-01")
	}
	if o, err = c.WaitOrder(t.Context(), o.URI); err != nil || o.Status != xacme.StatusReady {
		t.Fatalf("order of %v: %+v, %v; want ready", names, o, err)
	}
	return o
}
