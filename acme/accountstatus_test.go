// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestAccountNotValid: every use case refuses an account that is
// deactivated or revoked, including new-account with its key (which would
// otherwise return the account), with 401 unauthorized (RFC 8555 §7.3.6),
// and writes nothing.
func TestAccountNotValid(t *testing.T) {
	st := openSQLite(t)
	svc := replica(t, st, "status", time.Now, &recorder{})
	ctx := t.Context()
	for _, status := range []acme.Status{acme.StatusDeactivated, acme.StatusRevoked} {
		caller, _ := seedAuthzs(t, st, time.Now(), 1)
		acct := *caller.Account
		acct.Status = status
		if err := st.UpdateAccount(ctx, &acct, acme.StatusValid); err != nil {
			t.Fatal(err)
		}
		caller.Account = &acct
		byKey := acme.Caller{KeyJSON: acct.Key, Thumbprint: acct.KeyThumbprint}
		orders, _, err := st.ListOrders(ctx, acct.ID, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			call func() error
		}{
			{"new-account", func() error {
				_, _, err := svc.NewAccount(ctx, byKey, acme.NewAccountRequest{TermsOfServiceAgreed: true})
				return err
			}},
			{"new-account onlyReturnExisting", func() error {
				_, _, err := svc.NewAccount(ctx, byKey, acme.NewAccountRequest{OnlyReturnExisting: true})
				return err
			}},
			{"account update", func() error {
				_, err := svc.UpdateAccount(ctx, caller, acct.ID, &acme.AccountUpdate{Contact: &[]string{}})
				return err
			}},
			{"key change", func() error {
				_, err := svc.KeyChange(ctx, caller, []byte(`{"kty":"EC"}`), "other-thumbprint")
				return err
			}},
			{"new-order", func() error {
				_, err := svc.NewOrder(ctx, caller, acme.NewOrderRequest{Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "x.example.com"}}})
				return err
			}},
			{"orders list", func() error {
				_, _, err := svc.ListOrders(ctx, caller, acct.ID, "", 10)
				return err
			}},
		} {
			t.Run(string(status)+"/"+tc.name, func(t *testing.T) {
				err := tc.call()
				var p *acme.Problem
				if !errors.As(err, &p) || p.Type != acme.ProbUnauthorized || p.Status != http.StatusUnauthorized {
					t.Fatalf("got %v; want 401 %s", err, acme.ProbUnauthorized)
				}
				after, err := st.GetAccount(ctx, acct.ID)
				if err != nil || after.Status != status || after.KeyThumbprint != acct.KeyThumbprint {
					t.Errorf("the account after the refused request: %+v, %v", after, err)
				}
				if now, _, _ := st.ListOrders(ctx, acct.ID, "", 100); len(now) != len(orders) {
					t.Errorf("the account has %d orders after the refused request, want %d", len(now), len(orders))
				}
			})
		}
	}
}
