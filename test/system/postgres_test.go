// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"context"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/storage/postgres"
)

// TestPostgresEndToEnd: weir on PostgreSQL issues a certificate to an
// x/crypto/acme client, stores it there, revokes it and lists it on the
// CRL.
func TestPostgresEndToEnd(t *testing.T) {
	dsn := postgresSchema(t)
	e := startEnv(t, func(c *server.Config) {
		c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 8}
	})
	if _, ok := e.srv.Store().(*postgres.Store); !ok {
		t.Fatalf("the server's store is a %T, want *postgres.Store", e.srv.Store())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	c := e.Client(acmeenv.NewKey(t))
	if _, err := c.Register(ctx, &xacme.Account{Contact: []string{"mailto:ops@example.org"}}, xacme.AcceptTOS); err != nil {
		t.Fatalf("register: %v", err)
	}
	certKey := acmeenv.NewKey(t)
	chain, certURL := e.Issue(ctx, c, certKey, "http-01", xacme.DomainIDs("pg.weir.test", "www.pg.weir.test")...)
	leaf := e.VerifyChain(chain, "pg.weir.test", "www.pg.weir.test")
	serial := ca.SerialHex(leaf.SerialNumber)

	stored, err := e.srv.Store().GetCertificate(ctx, serial)
	if err != nil {
		t.Fatalf("the certificate is not in PostgreSQL: %v", err)
	}
	if !bytes.Equal(stored.DER, chain[0]) {
		t.Error("the stored certificate differs from the one served")
	}
	if fetched, err := c.FetchCert(ctx, certURL, true); err != nil || len(fetched) != 2 || !bytes.Equal(fetched[0], chain[0]) {
		t.Fatalf("fetch cert: %d certs, %v", len(fetched), err)
	}

	if err := c.RevokeCert(ctx, certKey, chain[0], xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if got, ok := e.CRLSerials(leaf)[leaf.SerialNumber.String()]; !ok || got != int(xacme.CRLReasonKeyCompromise) {
		t.Errorf("CRL: serial %s with reason %d (listed %v), want keyCompromise", leaf.SerialNumber, got, ok)
	}
	if stored, err = e.srv.Store().GetCertificate(ctx, serial); err != nil || !stored.Revoked() {
		t.Errorf("stored certificate after revocation: revoked %v, %v", stored != nil && stored.Revoked(), err)
	}

	// /readyz checks PostgreSQL.
	res, err := e.HTTP.Get(e.Base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("/readyz: %d, want 200", res.StatusCode)
	}
}
