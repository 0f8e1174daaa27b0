// SPDX-License-Identifier: Apache-2.0

package system

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// tenantZones are the flags of a tenant that admits both zones.
func tenantZones() []string { return []string{"--allow", "." + keepZone + ",." + flightZone} }

// changeRows are the changes an operator can make to a running CA: the
// policy's here, the CA's own (issuers, CRLs, keys; each with a restart)
// in change_matrix_ca_rows_test.go.
func changeRows() []changeRow {
	return append([]changeRow{
		{
			name:     "tenant names narrowed",
			inflight: inflight{tenant: tenantZones()},
			change: func(m *changeRun) {
				m.e.cli.Run(m.t, 0, "tenant", "update", matrixTenant, "--allow", "."+keepZone)
			},
			after: func(t *testing.T, m *changeRun) {
				m.refuseInFlight(t, func(name string) string {
					return fmt.Sprintf("tenant %q forbids %q: it matches none of the tenant's allowed-names", matrixTenant, name)
				})
			},
		},
		{
			name:     "tenant challenge types narrowed",
			inflight: inflight{tenant: tenantZones()},
			change: func(m *changeRun) {
				m.e.cli.Run(m.t, 0, "tenant", "update", matrixTenant, "--challenges", "dns-01")
			},
			after:     afterChallengesNarrowed([]string{"dns-01"}, fmt.Sprintf("tenant %q", matrixTenant), "http-01"),
			afterType: "dns-01",
		},
		{
			name: "tenant profiles and max lifetime narrowed",
			inflight: inflight{tenant: tenantZones(), then: func(t *testing.T, m *changeRun) {
				// An order asking for 72 hours, one of the profile about to
				// be withdrawn.
				o, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs("l."+flightZone), xacme.WithOrderNotAfter(time.Now().Add(72*time.Hour)))
				if err != nil {
					t.Fatal(err)
				}
				m.e.Solve(t.Context(), m.c, o.AuthzURLs[0], "http-01")
				m.orders["notAfter"] = o
				url, _ := m.e.readyProfileOrder(t.Context(), m.c, string(m.c.KID), "tls-client-server", "q."+flightZone)
				if m.orders["profile"], err = m.c.GetOrder(t.Context(), url); err != nil {
					t.Fatal(err)
				}
			}},
			change: func(m *changeRun) {
				m.e.cli.Run(m.t, 0, "tenant", "update", matrixTenant, "--profiles", "tls-server", "--max-lifetime", "24h")
			},
			after: afterTenantProfiles,
		},
		{
			name:     "tenant delegation removed",
			inflight: inflight{tenant: append(tenantZones(), "--delegated-zone", "."+flightZone)},
			change: func(m *changeRun) {
				m.e.cli.Run(m.t, 0, "tenant", "update", matrixTenant, "--delegated-zone", "")
			},
			after: afterDelegationRemoved,
		},
		{
			name:     "EAB key revoked",
			inflight: inflight{tenant: tenantZones()},
			change:   func(m *changeRun) { m.e.cli.Run(m.t, 0, "eab", "revoke", m.eab.KeyID) },
			after:    afterEABRevoked,
		},
		{
			name: "admin credential revoked",
			inflight: inflight{then: func(t *testing.T, m *changeRun) {
				var cred admin.CredentialView
				m.e.cli.JSON(t, &cred, "admin", "token", "add", "ops", "--role", "operate")
				m.token = cred.Token
				for _, path := range []string{"/api/v1/whoami", "/api/v1/crl/regenerate"} {
					if got := bearerStatus(t, m.e, m.token, path); got != http.StatusOK {
						t.Fatalf("%s with the new credential: %d, want 200", path, got)
					}
				}
			}},
			change: func(m *changeRun) { m.e.cli.Run(m.t, 0, "admin", "token", "revoke", "ops") },
			after: func(t *testing.T, m *changeRun) {
				m.check(t, "the credential is refused at once", func(t *testing.T) {
					for _, path := range []string{"/api/v1/whoami", "/api/v1/crl/regenerate"} {
						if got := bearerStatus(t, m.e, m.token, path); got != http.StatusUnauthorized {
							t.Errorf("%s with the revoked credential: %d, want 401 at once", path, got)
						}
					}
				})
				m.completeInFlight(t)
			},
		},
		{
			name:  "ca.policy narrowed",
			setup: func(c *server.Config) { c.CA.Policy.AllowedDomains = []string{keepZone, flightZone} },
			change: func(m *changeRun) {
				m.e.reloadWith(func(c *server.Config) {
					c.CA.Policy.AllowedDomains = []string{keepZone}
					c.CA.Policy.DeniedDomains = []string{"deny." + keepZone}
				})
			},
			after: func(t *testing.T, m *changeRun) {
				m.refuseInFlight(t, func(name string) string {
					return fmt.Sprintf("policy forbids issuing for %q: it is not under any of ca.policy.allowed-domains", name)
				})
				m.check(t, "a new order for a denied name is refused", func(t *testing.T) {
					_, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs("x.deny."+keepZone))
					wantACMEError(t, "a new order for a denied name", err, http.StatusBadRequest, acme.ProbRejectedIdentifier,
						fmt.Sprintf("it is under the denied domain %q", "deny."+keepZone))
				})
			},
		},
		{
			// challenges.*.enabled needs a restart (server/reload.go, restartKeys).
			name:      "http-01 switched off",
			change:    func(m *changeRun) { m.restart(func(c *server.Config) { c.Challenges.HTTP01.Enabled = new(false) }) },
			after:     afterChallengesNarrowed([]string{"dns-01", "tls-alpn-01"}, "http-01", "no longer enabled"),
			afterType: "dns-01",
		},
	}, caChangeRows()...)
}

// afterChallengesNarrowed: a change that leaves only the challenge types
// left for the account's names, http-01 taken out, refused by the rule
// whose words the refusal holds. The pending http-01 challenge is
// refused, the order ready through an authorization valid by http-01 is
// refused at finalize, and that authorization is not reused: a new order
// for the name gets a pending authorization offering left.
func afterChallengesNarrowed(left []string, rule ...string) func(*testing.T, *changeRun) {
	return func(t *testing.T, m *changeRun) {
		m.check(t, "the pending http-01 challenge is refused", func(t *testing.T) {
			m.wantChallengeRefused(t, "http-01", rule...)
		})
		m.check(t, "the ready order validated by http-01 is refused at finalize", func(t *testing.T) {
			_, err := m.finalize(t, m.ready, readyName)
			var ae *xacme.Error
			if !errors.As(err, &ae) {
				t.Fatalf("finalizing the order validated by http-01: %v; want an ACME problem naming %q", err, rule)
			}
			wantRefusal(t, "finalizing the order validated by http-01", ae, rule...)
		})
		m.check(t, "the http-01 authorization is not reused", func(t *testing.T) {
			o, a := m.offered(t, readyName)
			if o.Status != xacme.StatusPending || a.Status != xacme.StatusPending || !slices.Equal(challengeTypesOf(a), left) {
				t.Errorf("a new order for %s: order %s, authorization %s offering %v; want pending, offering %v",
					readyName, o.Status, a.Status, challengeTypesOf(a), left)
			}
		})
	}
}

// afterTenantProfiles: the tenant's profiles narrowed to tls-server and
// its max lifetime to 24h. Its orders of the withdrawn profile and those
// asking for a longer notAfter are refused at finalize; what stays
// admitted issues, cut to 24 hours.
func afterTenantProfiles(t *testing.T, m *changeRun) {
	m.check(t, "the order asking for 72h is refused at finalize", func(t *testing.T) {
		_, err := m.finalize(t, m.orders["notAfter"], "l."+flightZone)
		wantACMEError(t, "finalizing the order asking for 72h", err, http.StatusBadRequest, acme.ProbMalformed,
			"exceeds the maximum certificate lifetime of 24h0m0s")
	})
	m.check(t, "the order of the withdrawn profile is refused at finalize", func(t *testing.T) {
		_, err := m.finalize(t, m.orders["profile"], "q."+flightZone)
		wantACMEError(t, "finalizing the order of the withdrawn profile", err, http.StatusBadRequest, acme.ProbInvalidProfile,
			fmt.Sprintf("tenant %q may not use profile %q", matrixTenant, "tls-client-server"))
	})
	m.check(t, "a new order of the withdrawn profile is refused", func(t *testing.T) {
		res := m.e.profileOrder(m.c.Key, string(m.c.KID), "tls-client-server", nil, "n."+flightZone)
		if typ, detail := res.Problem(); res.Status != http.StatusBadRequest || typ != string(acme.ProbInvalidProfile) {
			t.Errorf("a new order of the withdrawn profile: %d %s %q; want 400 %s", res.Status, typ, detail, acme.ProbInvalidProfile)
		}
	})
	for _, c := range m.completeInFlight(t) {
		if life := c.leaf.NotAfter.Sub(c.leaf.NotBefore); life > 24*time.Hour+time.Minute {
			t.Errorf("%s, issued after the change, lives %s; want at most the tenant's new max-lifetime 24h", c.name, life)
		}
	}
}

// afterDelegationRemoved: the tenant's delegated zone (flightZone)
// removed. Its orders made ready by the delegation are refused at
// finalize, and a new order for such a name needs a challenge again,
// which validates and issues.
func afterDelegationRemoved(t *testing.T, m *changeRun) {
	for _, w := range []struct {
		o    *xacme.Order
		name string
	}{{m.pending, pendingName}, {m.ready, readyName}} {
		m.check(t, "the delegated order of "+w.name+" is refused at finalize", func(t *testing.T) {
			m.wantFinalizeRefused(t, w.o, w.name, fmt.Sprintf("tenant %q no longer delegates %q", matrixTenant, w.name))
		})
	}
	m.check(t, "the delegated authorization is not reused", func(t *testing.T) {
		o, a := m.offered(t, readyName)
		if o.Status != xacme.StatusPending || a.Status != xacme.StatusPending || len(a.Challenges) == 0 {
			t.Fatalf("a new order for %s: order %s, authorization %s with %d challenges; want pending with challenges",
				readyName, o.Status, a.Status, len(a.Challenges))
		}
		m.e.Solve(t.Context(), m.c, o.AuthzURLs[0], "http-01")
		if o, err := m.c.WaitOrder(t.Context(), o.URI); err != nil {
			t.Fatalf("the order validated by http-01: %v", err)
		} else if _, err := m.finalize(t, o, readyName); err != nil {
			t.Errorf("finalizing the order validated by http-01: %v", err)
		}
	})
}

// afterEABRevoked: the EAB key the account is bound with revoked. The key
// binds no new account (403 unauthorized); the account bound with it
// keeps working, in its tenant (docs/operations.md, "External Account
// Binding": revoking a key stops it from binding; RFC 8555 §7.3.4 binds
// a key when the account is created and says nothing of it after).
func afterEABRevoked(t *testing.T, m *changeRun) {
	m.check(t, "the key binds no new account", func(t *testing.T) {
		_, err := m.e.eabRegister(t.Context(), acmeenv.NewKey(t), m.eab.KeyID, m.hmac)
		wantACMEError(t, "a new account with the revoked key", err, http.StatusForbidden, acme.ProbUnauthorized,
			fmt.Sprintf("the key %q is revoked", m.eab.KeyID))
	})
	m.check(t, "the account keeps its tenant", func(t *testing.T) {
		_, err := m.c.AuthorizeOrder(t.Context(), xacme.DomainIDs("x.other.weir.test"))
		wantACMEError(t, "a name outside the tenant", err, http.StatusBadRequest, acme.ProbRejectedIdentifier,
			fmt.Sprintf("tenant %q forbids %q", matrixTenant, "x.other.weir.test"))
	})
	m.completeInFlight(t)
}
