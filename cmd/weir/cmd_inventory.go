// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/web/admin"
)

func cmdAccounts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"list":       {"list [-q TEXT] [-status S] [-limit N] [-cursor C] [--json]", accountsList},
		"show":       {"show ID [--json]", accountsShow},
		"deactivate": {"deactivate ID", accountsDeactivate},
	}
	return runGroup(ctx, "accounts", verbs, []string{"list", "show", "deactivate"}, args, stdout, stderr)
}

func accountsList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("accounts list", "accounts list", "Lists accounts, newest first.", stderr)
	q := url.Values{}
	fs.Func("q", "search: an account ID, or text in a contact, key thumbprint or creating IP", setQuery(q, "q"))
	fs.Func("status", "only accounts in this `status` (valid, deactivated)", setQuery(q, "status"))
	return listPage(ctx, fs, af, args, q, "/api/v1/accounts", stdout, stderr, func(accts []admin.AccountView) {
		tw := newTable(stdout, "ID\tSTATUS\tCREATED\tIP\tCONTACT")
		for _, a := range accts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.CreatedAt.UTC().Format(time.RFC3339), a.CreatedIP, strings.Join(a.Contact, " "))
		}
		tw.Flush()
	})
}

// setQuery is a flag.Func that stores the flag's value as q[key].
func setQuery(q url.Values, key string) func(string) error {
	return func(v string) error { q.Set(key, v); return nil }
}

// listPage runs a list verb: the paging flags, the request, and --json;
// else it prints the page's items with table, then how to get the next
// page.
func listPage[T any](ctx context.Context, fs *cmdFlags, af *adminFlags, args []string, q url.Values, path string, stdout, stderr io.Writer, table func([]T)) int {
	limit := fs.Int("limit", 50, "page size (at most 500)")
	cursor := fs.String("cursor", "", "the `cursor` of a later page, as printed")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	q.Set("limit", strconv.Itoa(*limit))
	q.Set("cursor", *cursor)
	return ask(ctx, fs, af, nil, get(path, q), stdout, stderr, func(p admin.Page[T]) {
		table(p.Items)
		if p.Next != "" {
			fmt.Fprintf(stdout, "\nmore: -cursor %s\n", p.Next)
		}
	})
}

func accountsShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("accounts show", "accounts show ID", "Shows an account and its limiter buckets.", stderr)
	id, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	c, err := af.client(stderr)
	if err != nil {
		return fail(stderr, "accounts show", err)
	}
	var a admin.AccountView
	if err := c.Get(ctx, "/api/v1/accounts/"+url.PathEscape(id), nil, &a); err != nil {
		return fail(stderr, "accounts show", err)
	}
	var certs admin.Page[admin.CertView]
	if err := c.Get(ctx, "/api/v1/certs", url.Values{"account": {a.ID}, "limit": {"20"}}, &certs); err != nil {
		return fail(stderr, "accounts show", err)
	}
	if *af.json {
		printJSON(stdout, map[string]any{"account": a, "certificates": certs.Items})
		return 0
	}
	tw := newTable(stdout, "")
	fmt.Fprintf(tw, "ID\t%s\nSTATUS\t%s\nCREATED\t%s from %s\nCONTACT\t%s\nKEY\t%s\n", a.ID, a.Status,
		a.CreatedAt.UTC().Format(time.RFC3339), a.CreatedIP, strings.Join(a.Contact, " "), a.KeyThumbprint)
	tw.Flush()
	fmt.Fprintf(stdout, "\nlatest certificates:\n")
	printCerts(stdout, certs.Items)
	return 0
}

func accountsDeactivate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("accounts deactivate", "accounts deactivate ID", "Deactivates an account: its requests are refused from then on.", stderr)
	id, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return ask(ctx, fs, af, nil, post("/api/v1/accounts/"+url.PathEscape(id)+"/deactivate", struct{}{}), stdout, stderr, func(a admin.AccountView) {
		fmt.Fprintf(stdout, "account %s is %s\n", a.ID, a.Status)
	})
}

func cmdCerts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]subcommand{
		"list":      {"list [-q TEXT] [-account ID] [-state S] [-limit N] [-cursor C] [--json]", certsList},
		"show":      {"show SERIAL [--json] [--pem]", certsShow},
		"revoke":    {"revoke SERIAL | --all-from-account ID [--reason R]", certsRevoke},
		"renew-now": {"renew-now SERIAL... | --account ID | --all", certsRenewNow},
	}
	return runGroup(ctx, "certs", verbs, []string{"list", "show", "revoke", "renew-now"}, args, stdout, stderr)
}

func printCerts(w io.Writer, certs []admin.CertView) {
	tw := newTable(w, "SERIAL\tSTATE\tACCOUNT\tNOT AFTER\tNAMES")
	for _, c := range certs {
		state := c.State
		if c.Reason != "" {
			state += " (" + c.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Serial, state, c.Account, c.NotAfter.UTC().Format(time.RFC3339), strings.Join(c.Names, ","))
	}
	tw.Flush()
}

func certsList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("certs list", "certs list", "Lists certificates, newest first.", stderr)
	q := url.Values{}
	fs.Func("q", "search: a name, the start of one, its end (a domain), or a serial prefix", setQuery(q, "q"))
	fs.Func("account", "only this account's certificates", setQuery(q, "account"))
	fs.Func("state", "only certificates in this `state` (active, revoked, expired)", setQuery(q, "state"))
	return listPage(ctx, fs, af, args, q, "/api/v1/certs", stdout, stderr, func(certs []admin.CertView) { printCerts(stdout, certs) })
}

func certsShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("certs show", "certs show SERIAL", "Shows a certificate.", stderr)
	pemOnly := fs.Bool("pem", false, "print only the certificate PEM")
	serial, code, ok := oneArg(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	return ask(ctx, fs, af, nil, get("/api/v1/certs/"+url.PathEscape(serial), nil), stdout, stderr, func(v admin.CertView) {
		if *pemOnly {
			fmt.Fprint(stdout, v.PEM)
			return
		}
		tw := newTable(stdout, "")
		fmt.Fprintf(tw, "SERIAL\t%s\nSTATE\t%s\nNAMES\t%s\nACCOUNT\t%s\nORDER\t%s\nSUBJECT\t%s\nISSUER\t%s\nNOT BEFORE\t%s\nNOT AFTER\t%s\nISSUED\t%s\n",
			v.Serial, v.State, strings.Join(v.Names, ", "), v.Account, v.Order, v.Subject, v.Issuer,
			v.NotBefore.UTC().Format(time.RFC3339), v.NotAfter.UTC().Format(time.RFC3339), v.IssuedAt.UTC().Format(time.RFC3339))
		if v.RevokedAt != nil {
			fmt.Fprintf(tw, "REVOKED\t%s (%s)\n", v.RevokedAt.UTC().Format(time.RFC3339), v.Reason)
		}
		printValidations(tw, v)
		tw.Flush()
	})
}

func certsRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("certs revoke", "certs revoke SERIAL | --all-from-account ID [--reason R]",
		"Revokes a certificate, or every active certificate of an account (incident mode: their\nARI windows move into the past, so ARI clients renew at once, and those renewals are\nexempt from the account limits), and regenerates the CRL. Reasons (RFC 5280): unspecified,\nkeyCompromise, cACompromise, affiliationChanged, superseded, cessationOfOperation,\nprivilegeWithdrawn, aACompromise, or their codes.", stderr)
	reason := fs.String("reason", "unspecified", "the revocation `reason`")
	allOf := fs.String("all-from-account", "", "revoke every active certificate of this account `ID`")
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if (len(pos) == 1) == (*allOf != "") || len(pos) > 1 {
		return usageError(fs, stderr, "give one SERIAL or --all-from-account")
	}
	if *allOf != "" {
		return incident(ctx, fs, af, "/api/v1/certs/revoke-all", admin.IncidentRequest{Account: *allOf, Reason: *reason}, stdout, stderr)
	}
	return ask(ctx, fs, af, nil, post("/api/v1/certs/"+url.PathEscape(pos[0])+"/revoke", admin.RevokeRequest{Reason: *reason}), stdout, stderr, func(v admin.CertView) {
		fmt.Fprintf(stdout, "revoked %s (%s)\n", v.Serial, v.Reason)
	})
}

// incident runs an incident action and prints the certificates it moved.
func incident(ctx context.Context, fs *cmdFlags, af *adminFlags, path string, req admin.IncidentRequest, stdout, stderr io.Writer) int {
	return ask(ctx, fs, af, nil, post(path, req), stdout, stderr, func(v admin.IncidentView) {
		fmt.Fprintf(stdout, "%s: %d certificates; ARI clients renew at their next poll\n", v.Action, len(v.Certificates))
		printCerts(stdout, v.Certificates)
	})
}

// certsRenewNow is mass renewal without revocation.
func certsRenewNow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("certs renew-now", "certs renew-now SERIAL... | --account ID | --all",
		"Moves the ARI renewal windows of these active certificates into the past, so ARI clients\nrenew at their next poll, and exempts those renewals from the account limits (e.g. before\nretiring an intermediate). Nothing is revoked.", stderr)
	account := fs.String("account", "", "every active certificate of this account `ID`")
	all := fs.Bool("all", false, "every active certificate of the CA")
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if boolInt(len(pos) > 0)+boolInt(*account != "")+boolInt(*all) != 1 {
		return usageError(fs, stderr, "give SERIALs, --account or --all")
	}
	return incident(ctx, fs, af, "/api/v1/certs/renew-now", admin.IncidentRequest{Account: *account, Serials: pos, All: *all}, stdout, stderr)
}

func cmdCRL(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newVerbFlags("crl", "crl [-regenerate] [-out FILE] [--json]",
		"Shows the current CRL: its number, validity and revoked serials.", stderr)
	regen := fs.Bool("regenerate", false, "sign a new CRL first")
	out := fs.String("out", "", "also write the DER CRL to this `file`")
	if code, ok := parseNoArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	c, err := af.client(stderr)
	if err != nil {
		return fail(stderr, "crl", err)
	}
	var v admin.CRLView
	if *regen {
		err = c.Do(ctx, http.MethodPost, "/api/v1/crl/regenerate", struct{}{}, &v)
	} else {
		err = c.Get(ctx, "/api/v1/crl", nil, &v)
	}
	if err != nil {
		return fail(stderr, "crl", err)
	}
	if *out != "" {
		var der []byte
		if err := c.Get(ctx, "/api/v1/crl", url.Values{"format": {"der"}}, &der); err != nil {
			return fail(stderr, "crl", err)
		}
		if err := os.WriteFile(*out, der, 0o644); err != nil {
			return fail(stderr, "crl", err)
		}
	}
	if *af.json {
		printJSON(stdout, v)
		return 0
	}
	fmt.Fprintf(stdout, "CRL %s by %s\n  this update: %s\n  next update: %s\n  revoked:     %d\n",
		v.Number, v.Issuer, v.ThisUpdate.Format(time.RFC3339), v.NextUpdate.Format(time.RFC3339), len(v.Entries))
	if len(v.Entries) > 0 {
		tw := newTable(stdout, "\nSERIAL\tREVOKED\tREASON")
		for _, e := range v.Entries {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Serial, e.RevokedAt.Format(time.RFC3339), e.Reason)
		}
		tw.Flush()
	}
	return 0
}

// printValidations prints how each name of a certificate was validated,
// one VALIDATED line per name, or that it is unknown.
func printValidations(w io.Writer, v admin.CertView) {
	if !v.ValidationsKnown() {
		fmt.Fprintf(w, "VALIDATED\tunknown (issued before weir recorded how each name was validated)\n")
		return
	}
	for _, nv := range v.NameValidations() {
		method, at, reused := orDash(nv.Method), "-", ""
		if !nv.ValidatedAt.IsZero() {
			at = nv.ValidatedAt.UTC().Format(time.RFC3339)
		}
		if nv.Reused {
			reused = ", reused"
		}
		fmt.Fprintf(w, "VALIDATED\t%s: %s at %s, authorization %s%s\n", nv.Name, method, at, nv.AuthzID, reused)
	}
}
