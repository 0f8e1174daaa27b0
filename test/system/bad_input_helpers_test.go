// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"slices"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/jws"
	"github.com/weir-pki/weir/internal/acmeenv"
)

func wantAlgorithms(t *testing.T, p *acme.Problem) {
	if !slices.Equal(p.Algorithms, jws.Algorithms()) {
		t.Errorf("algorithms = %q; want %q", p.Algorithms, jws.Algorithms())
	}
}
func wantIdentifier(id acme.Identifier) func(*testing.T, *acme.Problem) {
	return func(t *testing.T, p *acme.Problem) {
		if p.Identifier == nil || *p.Identifier != id {
			t.Errorf("problem identifier = %v; want %+v", p.Identifier, id)
		}
	}
}

// wantSubproblems checks one subproblem of type typ per identifier.
func wantSubproblems(typ acme.ProblemType, ids ...acme.Identifier) func(*testing.T, *acme.Problem) {
	return func(t *testing.T, p *acme.Problem) {
		if len(p.Subproblems) != len(ids) {
			t.Fatalf("%d subproblems; want %d: %+v", len(p.Subproblems), len(ids), p.Subproblems)
		}
		var got []acme.Identifier
		for _, sp := range p.Subproblems {
			if sp.Type != typ || sp.Detail == "" {
				t.Errorf("subproblem %+v; want type %s with a detail", sp, typ)
			}
			if sp.Identifier == nil {
				t.Errorf("subproblem %q has no identifier", sp.Detail)
				continue
			}
			got = append(got, *sp.Identifier)
		}
		for _, id := range ids {
			if !slices.Contains(got, id) {
				t.Errorf("subproblem identifiers %+v lack %+v", got, id)
			}
		}
	}
}

// newOrderAs sends a new-order signed by key with kid.
func newOrderSignedBy(e *env, key crypto.Signer, kid, url string) func(*testing.T) acmeenv.Response {
	return func(t *testing.T) acmeenv.Response {
		return e.PostJWS(key, url, []byte(`{"identifiers":[{"type":"dns","value":"kid.weir.test"}]}`), acmeenv.SignOpts{KID: kid})
	}
}

// checkServesAfterBadInput: after TestBadInput's refused requests the
// server still serves and issues (the snapshot sees those writes), and
// the ready order can still be finalized.
func checkServesAfterBadInput(t *testing.T, e *env, clientA *xacme.Client, ready *xacme.Order) {
	t.Helper()
	ctx := t.Context()
	// The server still serves and issues; the snapshot sees the writes.
	res, err := e.HTTP.Get(e.Base + "/directory")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("directory after bad input: %d", res.StatusCode)
	}
	before := snapshotDB(t, e)
	chain, _ := e.Issue(ctx, clientA, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("after.weir.test")...)
	e.VerifyChain(chain, "after.weir.test")
	after := snapshotDB(t, e)
	for table, delta := range map[string]int{"orders": 1, "authzs": 1, "certificates": 1, "accounts": 0} {
		if got := after.Counts[table] - before.Counts[table]; got != delta {
			t.Errorf("issuance after bad input added %d %s rows; want %d", got, table, delta)
		}
	}
	// The ready order is still ready and can be finalized.
	certKey := acmeenv.NewKey(t)
	if _, _, err := clientA.CreateOrderCert(ctx, ready.FinalizeURL, acmeenv.CSRFor(t, certKey, "ready.weir.test"), false); err != nil {
		t.Fatalf("finalize the ready order after the bad CSRs: %v", err)
	}
}

// foreignCertDER is a certificate this CA never issued.
func foreignCertDER(t *testing.T) []byte {
	t.Helper()
	foreignKey := acmeenv.NewKey(t)
	foreignTmpl := &x509.Certificate{SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"foreign.weir.test"}}
	foreignDER, err := x509.CreateCertificate(rand.Reader, foreignTmpl, foreignTmpl, foreignKey.Public(), foreignKey)
	if err != nil {
		t.Fatal(err)
	}
	return foreignDER
}
