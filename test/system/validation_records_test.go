// SPDX-License-Identifier: Apache-2.0

package system

import (
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// TestIssuanceValidationRecord: each issuance records how each of its
// names was validated (Baseline Requirements §3.2.2.4, §5.4.1), in the
// audit record and with the certificate in the store, where the admin
// API's certificate and weir certs show read it: the first certificate's
// name by tls-alpn-01; the second's by dns-01 for its new name and, for
// the name the first order validated, by that authorization and its
// method, marked reused.
func TestIssuanceValidationRecord(t *testing.T) {
	e := startEnv(t, nil)
	ctx := t.Context()
	c := e.Client(acmeenv.NewKey(t))
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	_, first := e.Issue(ctx, c, acmeenv.NewKey(t), "tls-alpn-01", xacme.DomainIDs("a.weir.test")...)
	_, second := e.Issue(ctx, c, acmeenv.NewKey(t), "dns-01", xacme.DomainIDs("a.weir.test", "c.weir.test")...)
	serial := func(certURL string) string { return certURL[strings.LastIndex(certURL, "/")+1:] }

	// The JSON of the admin API, as weir certs show --json prints it.
	var one, two struct {
		Serial      string            `json:"serial"`
		Validations *[]nameValidation `json:"validations"`
	}
	e.cli.JSON(t, &one, "certs", "show", serial(first))
	e.cli.JSON(t, &two, "certs", "show", serial(second))
	if one.Validations == nil || len(*one.Validations) != 1 || two.Validations == nil {
		t.Fatalf("the certificates' validations: %+v, %+v; want one for the first, a list for the second", one.Validations, two.Validations)
	}
	reused := (*one.Validations)[0]
	if reused.Name != "a.weir.test" || reused.Method != "tls-alpn-01" || reused.Reused || reused.ValidatedAt.IsZero() || reused.Authz == "" {
		t.Errorf("the first certificate's validation %+v; want a.weir.test by tls-alpn-01, not reused", reused)
	}
	got := *two.Validations
	if len(got) != 2 || !got[0].ValidatedAt.Equal(reused.ValidatedAt) || got[0].Name != reused.Name || got[0].Method != reused.Method ||
		got[0].Authz != reused.Authz || !got[0].Reused ||
		got[1].Name != "c.weir.test" || got[1].Method != "dns-01" || got[1].Reused || got[1].Authz == reused.Authz || got[1].ValidatedAt.IsZero() {
		t.Errorf("the second certificate's validations %+v; want a.weir.test by the first order's authorization (tls-alpn-01, reused) and c.weir.test by dns-01", got)
	}

	var rec *auditLine
	for _, l := range readAudit(t, server.AuditPath(e.cfg)) {
		if l.Type == "issuance" && l.Data["serial"] == two.Serial {
			rec = &l
		}
	}
	if rec == nil {
		t.Fatalf("no issuance of %s in the audit trail", two.Serial)
	}
	if v := auditValidations(t, rec); len(v) != 2 || !v[0].ValidatedAt.Equal(got[0].ValidatedAt) || v[0].Authz != got[0].Authz || !v[0].Reused ||
		v[1].Method != got[1].Method || v[1].Authz != got[1].Authz {
		t.Errorf("the audit record's validations %+v; want the stored ones %+v", v, got)
	}
	out := e.cli.Run(t, 0, "certs", "show", serial(second))
	for _, want := range []string{"VALIDATED", "a.weir.test: tls-alpn-01 at", "reused", "c.weir.test: dns-01 at"} {
		if !strings.Contains(out, want) {
			t.Errorf("weir certs show lacks %q:\n%s", want, out)
		}
	}
}
