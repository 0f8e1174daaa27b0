// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"crypto/x509"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/server"
)

// TestAuditTrail: an issuance, an ACME revocation, an admin revocation
// (with its admin action) and a reload each write one event naming its
// actor; weir audit verify passes, and names the line an edit altered.
func TestAuditTrail(t *testing.T) {
	e := startEnv(t, func(c *server.Config) { c.Audit.ReplicaID = "r1" })
	path := server.AuditPath(e.cfg)
	if !strings.HasSuffix(path, "audit-r1.jsonl") {
		t.Fatalf("audit path %s does not name the replica", path)
	}
	ctx, _, c, acct := e.Registered(t)
	account := e.accountID(acct.URI)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "a.weir.test"})
	if err := c.RevokeCert(ctx, nil, chain[0], xacme.CRLReasonSuperseded); err != nil {
		t.Fatal(err)
	}
	chain2, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "b.weir.test"})
	leaf2, _ := x509.ParseCertificate(chain2[0])
	serial2 := ca.SerialHex(leaf2.SerialNumber)
	e.cli.Run(t, 0, "certs", "revoke", serial2, "--reason", "keyCompromise")
	e.reloadWith(func(c *server.Config) { c.CA.Policy.DeniedDomains = []string{"blocked.test"} })

	lines := readAudit(t, path)
	byType := map[string][]auditLine{}
	for _, l := range lines {
		if l.Replica != "r1" {
			t.Errorf("event of replica %q", l.Replica)
		}
		byType[l.Type] = append(byType[l.Type], l)
	}
	iss := byType["issuance"]
	if len(iss) != 2 {
		t.Fatalf("%d issuance events, want 2: %+v", len(iss), lines)
	}
	if a := iss[0].Actor; a.Kind != "account" || a.ID != account || a.Address != "127.0.0.1" {
		t.Errorf("issuance actor %+v, want account %s from 127.0.0.1", a, account)
	}
	for _, k := range []string{"serial", "names", "account", "order", "profile", "issuer"} {
		if iss[0].Data[k] == nil || iss[0].Data[k] == "" {
			t.Errorf("issuance event lacks %s: %v", k, iss[0].Data)
		}
	}
	rev := byType["revocation"]
	if len(rev) != 2 {
		t.Fatalf("%d revocation events, want 2", len(rev))
	}
	if a := rev[0].Actor; a.Kind != "account" || a.ID != account || a.Address != "127.0.0.1" || rev[0].Data["reason"] != "superseded" {
		t.Errorf("ACME revocation %+v", rev[0])
	}
	if a := rev[1].Actor; a.Kind != "admin" || a.ID != "admin" || a.Address != "127.0.0.1" ||
		rev[1].Data["serial"] != serial2 || rev[1].Data["reason"] != "keyCompromise" {
		t.Errorf("admin revocation %+v", rev[1])
	}
	act := byType["admin-action"]
	if len(act) != 1 || act[0].Actor.Kind != "admin" || !strings.Contains(act[0].Data["action"].(string), "/certs/"+serial2+"/revoke") ||
		act[0].Data["status"] != float64(200) || act[0].Data["request"] == nil {
		t.Errorf("admin actions %+v", act)
	}
	rl := byType["config-reload"]
	if len(rl) != 1 || !slices.ContainsFunc(rl[0].Data["changed"].([]any), func(k any) bool { return k == "ca.policy.denied-domains" }) {
		t.Errorf("reload events %+v, want one naming ca.policy.denied-domains", rl)
	}

	// The counter is the audit sink's count of failed writes.
	if f := scrapeServer(t, e.srv)["weir_audit_write_failures_total"]; f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 0 {
		t.Errorf("weir_audit_write_failures_total: %v, want a counter at 0 failures", f)
	}
	if out := e.cli.Run(t, 0, "audit", "verify"); !strings.Contains(out, "chain intact") {
		t.Errorf("verify: %s", out)
	}
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"reason":"superseded"`), []byte(`"reason":"unspecified"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("nothing to edit")
	}
	os.WriteFile(path, edited, 0o600)
	at := 1 + bytes.Count(data[:bytes.Index(data, []byte(`"reason":"superseded"`))], []byte("\n"))
	out := e.cli.Run(t, 1, "audit", "verify")
	if want := path + ":" + strconv.Itoa(at) + ": "; !strings.Contains(out, want) || !strings.Contains(out, "altered") {
		t.Errorf("verify of an edited file: %s\nwant it to name %s", out, want)
	}
}
