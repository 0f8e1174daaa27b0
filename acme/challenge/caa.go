// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/weir-pki/weir/acme"
)

// CAA (RFC 8659) with the accounturi and validationmethods parameters of
// RFC 8657. Go's resolver cannot ask for CAA records, so this file has a
// small DNS client of its own: one question over UDP to the resolver of
// Config.Resolver (or the first nameserver of /etc/resolv.conf), again
// over TCP when the answer is truncated.

// CAAConfig turns CAA checking on and says who this CA is.
type CAAConfig struct {
	// Enabled turns the check on; off, CheckCAA allows everything.
	Enabled bool
	// Identities are the issuer domain names by which issue and issuewild
	// properties name this CA (compared case-insensitively).
	// (The accounturi parameter is compared with the account URL,
	// Config.AccountURIPrefix + ID: RFC 8657 §3.)
	Identities []string
}

// validate reports the problems of c.
func (c CAAConfig) validate() []error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	if len(c.Identities) == 0 {
		errs = append(errs, errors.New("challenge: config: CAA is enabled but no CA identities are set"))
	}
	for _, id := range c.Identities {
		if !isDNSName(strings.ToLower(id)) {
			errs = append(errs, fmt.Errorf("challenge: config: CAA identity %q is not a domain name", id))
		}
	}
	return errs
}

// The limits of the CAA client.
const (
	// queryTimeout bounds one DNS exchange (a CAA question, or the address
	// questions of addrs.go) within the validation's own timeout.
	queryTimeout = 5 * time.Second
	// maxCNAMEHops bounds a CNAME chain the resolver left to follow.
	maxCNAMEHops = 8
	// ednsSize is the UDP payload size advertised (the DNS flag day 2020
	// value).
	ednsSize = 1232
	// maxUDPReads bounds the datagrams read while waiting for the answer
	// to our query (stray or spoofed ones are skipped).
	maxUDPReads = 8
	// resolvConf is where the system's resolver is found when none is
	// configured.
	resolvConf = "/etc/resolv.conf"
)

// typeCAA is the CAA RR type (RFC 8659 §4.1); dnsmessage has no name for
// it.
const typeCAA dnsmessage.Type = 257

// caaRecord is one CAA resource record.
type caaRecord struct {
	critical bool
	tag      string // lower case
	value    string
}

// knownCAATag reports whether weir understands or may ignore a property
// tag: an unknown tag with the critical flag forbids issuance (RFC 8659
// §4.1).
func knownCAATag(tag string) bool {
	switch tag {
	case "issue", "issuewild", "iodef", "issuemail", "issuevmc", "contactemail", "contactphone":
		return true
	}
	return false
}

// CheckCAA checks the CAA records of req's identifier (RFC 8659 §3): the
// first non-empty CAA RRset found walking from the name towards the root
// (the base name of a wildcard) decides. Its issue properties, or for a
// wildcard its issuewild properties when there are any, must name one of
// the CA's identities, with an accounturi parameter, if any, equal to the
// account's URL and a validationmethods parameter, if any, listing the
// challenge type used. An unknown critical property forbids issuance, and
// so does a lookup that fails (SERVFAIL, a timeout): CAA must be known to
// allow it. IP identifiers have no CAA. It implements acme.CAAChecker.
func (v *Validator) CheckCAA(ctx context.Context, req acme.CAARequest) *acme.Problem {
	if !v.cfg.CAA.Enabled || req.Identifier.Type != acme.IdentifierDNS {
		return nil
	}
	p := v.checkCAA(ctx, req)
	if p == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		p = acme.Internal(fmt.Errorf("challenge: CAA check canceled: %w (%v)", context.Cause(ctx), p))
	}
	ident := req.Identifier
	p.Identifier = &ident
	return p
}

// checkCAA is CheckCAA without the bookkeeping.
func (v *Validator) checkCAA(ctx context.Context, req acme.CAARequest) *acme.Problem {
	base, wildcard := acme.Identifier{Type: acme.IdentifierDNS, Value: strings.ToLower(strings.TrimSuffix(req.Identifier.Value, "."))}.SplitWildcard()
	name, wildcard := base.Value, wildcard || req.Wildcard
	if !isDNSName(name) {
		return acme.Malformed("invalid dns identifier %s", excerpt([]byte(req.Identifier.Value)))
	}
	ctx, cancel := context.WithTimeout(ctx, v.cfg.Timeout)
	defer cancel()
	server, err := v.caaServer()
	if err != nil {
		return caaLookupProblem(name, err)
	}
	owner, recs, err := relevantCAA(ctx, server, name)
	if err != nil {
		return caaLookupProblem(name, err)
	}
	if len(recs) == 0 {
		return nil // no CAA anywhere up the tree: any CA may issue
	}
	accountURL := ""
	if req.AccountID != "" {
		accountURL = v.accountURL(req.AccountID)
	}
	why := caaForbids(recs, wildcard, v.cfg.CAA.Identities, accountURL, string(req.Method))
	if why == "" {
		return nil
	}
	return acme.NewProblem(acme.ProbCAA, "CAA record for %s prevents issuance: %s", owner, why)
}

// caaLookupProblem is the caa problem of a CAA lookup that failed.
func caaLookupProblem(name string, err error) *acme.Problem {
	p := acme.NewProblem(acme.ProbCAA, "CAA lookup for %s failed: %v; weir does not issue until CAA can be checked", name, err)
	p.Cause = err
	return p
}

// caaServer is the DNS server to ask: Config.Resolver, else the first
// nameserver of /etc/resolv.conf.
func (v *Validator) caaServer() (string, error) {
	if v.cfg.Resolver != "" {
		return v.cfg.Resolver, nil
	}
	f, err := os.Open(resolvConf)
	if err != nil {
		return "", fmt.Errorf("no DNS resolver: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			return net.JoinHostPort(fields[1], "53"), nil
		}
	}
	return "", fmt.Errorf("no DNS resolver: no nameserver in %s", resolvConf)
}

// relevantCAA finds the relevant RRset of name (RFC 8659 §3): the CAA
// records of name, else of its parent, and so on up to the top-level
// domain; owner is the name that has them. None anywhere is no records
// and no error.
func relevantCAA(ctx context.Context, server, name string) (owner string, recs []caaRecord, err error) {
	for n := name; n != ""; n = parentDomain(n) {
		recs, err := lookupCAA(ctx, server, n)
		if err != nil {
			return n, nil, err
		}
		if len(recs) > 0 {
			return n, recs, nil
		}
	}
	return "", nil, nil
}

// parentDomain drops the first label of name; "" for a single label.
func parentDomain(name string) string {
	_, parent, _ := strings.Cut(name, ".")
	return parent
}

// rcodeError is a DNS answer with an error RCODE other than NXDOMAIN.
type rcodeError struct {
	name  string
	rcode dnsmessage.RCode
}

func (e *rcodeError) Error() string {
	return fmt.Sprintf("%s for the CAA query of %s", rcodeName(e.rcode), e.name)
}

// rcodeName names the error RCODEs a resolver sends.
func rcodeName(rc dnsmessage.RCode) string {
	switch rc {
	case dnsmessage.RCodeFormatError:
		return "FORMERR"
	case dnsmessage.RCodeServerFailure:
		return "SERVFAIL"
	case dnsmessage.RCodeNotImplemented:
		return "NOTIMP"
	case dnsmessage.RCodeRefused:
		return "REFUSED"
	}
	return fmt.Sprintf("RCODE %d", int(rc))
}

// lookupCAA returns the CAA records of name, following CNAMEs: those the
// resolver followed in its answer, and, when it left the chain unfinished
// (an authoritative-only server), by asking again for the target.
// NXDOMAIN is no records.
func lookupCAA(ctx context.Context, server, name string) ([]caaRecord, error) {
	target := name
	for range maxCNAMEHops {
		resp, err := exchange(ctx, server, target, typeCAA)
		if err != nil {
			return nil, err
		}
		switch resp.RCode {
		case dnsmessage.RCodeSuccess:
		case dnsmessage.RCodeNameError:
			return nil, nil
		default:
			return nil, &rcodeError{name: target, rcode: resp.RCode}
		}
		final := followCNAMEs(resp.Answers, target)
		recs, err := caaAnswers(resp.Answers, final)
		if err != nil || len(recs) > 0 || final == target {
			return recs, err
		}
		target = final
	}
	return nil, fmt.Errorf("the CNAME chain from %s is longer than %d", name, maxCNAMEHops)
}

// followCNAMEs returns where the CNAME records of answers lead from name
// (name itself when none applies).
func followCNAMEs(answers []dnsmessage.Resource, name string) string {
	for range len(answers) {
		next := ""
		for _, rr := range answers {
			if c, ok := rr.Body.(*dnsmessage.CNAMEResource); ok && sameName(rr.Header.Name.String(), name) {
				next = strings.ToLower(strings.TrimSuffix(c.CNAME.String(), "."))
				break
			}
		}
		if next == "" || next == name {
			break
		}
		name = next
	}
	return name
}

// caaAnswers returns the CAA records of owner among answers.
func caaAnswers(answers []dnsmessage.Resource, owner string) ([]caaRecord, error) {
	var out []caaRecord
	for _, rr := range answers {
		if rr.Header.Type != typeCAA || !sameName(rr.Header.Name.String(), owner) {
			continue
		}
		u, ok := rr.Body.(*dnsmessage.UnknownResource)
		if !ok {
			continue
		}
		rec, err := parseCAA(u.Data)
		if err != nil {
			return nil, fmt.Errorf("malformed CAA record at %s: %w", owner, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// sameName compares DNS names case-insensitively, ignoring a trailing
// dot.
func sameName(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// parseCAA parses CAA RDATA (RFC 8659 §4.1): flags, tag length, tag,
// value.
func parseCAA(data []byte) (caaRecord, error) {
	if len(data) < 2 {
		return caaRecord{}, errors.New("shorter than its header")
	}
	n := int(data[1])
	if n == 0 || 2+n > len(data) {
		return caaRecord{}, fmt.Errorf("tag length %d does not fit", n)
	}
	tag := string(data[2 : 2+n])
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return caaRecord{}, fmt.Errorf("tag %s is not alphanumeric", excerpt([]byte(tag)))
		}
	}
	return caaRecord{critical: data[0]&0x80 != 0, tag: strings.ToLower(tag), value: string(data[2+n:])}, nil
}

// caaForbids decides the relevant RRset recs: "" when it allows issuance,
// else why not.
func caaForbids(recs []caaRecord, wildcard bool, identities []string, accountURL, method string) string {
	var issue, wild []caaRecord
	for _, r := range recs {
		switch {
		case r.tag == "issue":
			issue = append(issue, r)
		case r.tag == "issuewild":
			wild = append(wild, r)
		case r.critical && !knownCAATag(r.tag):
			return fmt.Sprintf("it has the critical property %q, which weir does not understand (RFC 8659 §4.1)", r.tag)
		}
	}
	// RFC 8659 §4.3: for a wildcard, issuewild properties, when present,
	// take the place of issue properties.
	relevant, tag := issue, "issue"
	if wildcard && len(wild) > 0 {
		relevant, tag = wild, "issuewild"
	}
	if len(relevant) == 0 {
		return "" // the set restricts no issuer (only iodef, say)
	}
	var named, accountMismatch, methodMismatch []string
	for _, r := range relevant {
		domain, params, ok := parseIssueValue(r.value)
		if !ok {
			continue // a malformed value authorizes nobody
		}
		named = append(named, cmpOr(domain, `";"`))
		if !slices.ContainsFunc(identities, func(id string) bool { return strings.EqualFold(id, domain) }) {
			continue
		}
		if u, ok := params["accounturi"]; ok && u != accountURL {
			accountMismatch = append(accountMismatch, u)
			continue
		}
		if m, ok := params["validationmethods"]; ok && !slices.Contains(strings.Split(m, ","), method) {
			methodMismatch = append(methodMismatch, m)
			continue
		}
		return ""
	}
	switch {
	case len(accountMismatch) > 0:
		return fmt.Sprintf("its %s property for this CA is for account %s, not %s (RFC 8657 §3)", tag, strings.Join(accountMismatch, ", "), accountURL)
	case len(methodMismatch) > 0:
		return fmt.Sprintf("its %s property for this CA allows validation methods %s, not %s (RFC 8657 §4)", tag, strings.Join(methodMismatch, "; "), method)
	case len(named) == 0:
		return fmt.Sprintf("its %s properties are malformed, so they authorize no CA", tag)
	}
	return fmt.Sprintf("its %s properties authorize %s, not %s", tag, strings.Join(named, ", "), strings.Join(identities, " or "))
}

// cmpOr returns s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// parseIssueValue parses the value of an issue or issuewild property
// (RFC 8659 §4.2): an optional issuer domain name, then optional
// "tag=value" parameters after a ";". ok is false when it does not follow
// the grammar or repeats a parameter; an empty domain names no CA.
func parseIssueValue(v string) (domain string, params map[string]string, ok bool) {
	const wsp = " \t"
	d, rest, hasParams := strings.Cut(v, ";")
	domain = strings.Trim(d, wsp)
	if domain != "" && !isDNSName(domain) {
		return "", nil, false
	}
	if !hasParams {
		return domain, map[string]string{}, true
	}
	params, err := parseIssueParams(rest)
	if err != nil {
		return "", nil, false
	}
	return domain, params, true
}

// parseIssueParams reads the parameters of an issue-value, what follows
// its first ";" (RFC 8659 §4.2): tag=value pairs separated by ";", tags
// in lower case in the map, none twice.
func parseIssueParams(rest string) (map[string]string, error) {
	const wsp = " \t"
	params := map[string]string{}
	for _, p := range strings.Split(rest, ";") {
		p = strings.Trim(p, wsp)
		if p == "" {
			continue
		}
		tag, val, found := strings.Cut(p, "=")
		tag, val = strings.ToLower(strings.Trim(tag, wsp)), strings.Trim(val, wsp)
		if !found || !validParamTag(tag) || !validParamValue(val) {
			return nil, fmt.Errorf("parameter %s is not tag=value (RFC 8659 §4.2)", excerpt([]byte(p)))
		}
		if _, dup := params[tag]; dup {
			return nil, fmt.Errorf("parameter %s appears twice", tag)
		}
		params[tag] = val
	}
	return params, nil
}

// validParamTag: (ALPHA / DIGIT) *( *("-") (ALPHA / DIGIT) ).
func validParamTag(t string) bool {
	if t == "" || t[0] == '-' || t[len(t)-1] == '-' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validParamValue: *(%x21-3A / %x3C-7E), printable ASCII but ";".
func validParamValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x21 || c > 0x7e || c == ';' {
			return false
		}
	}
	return true
}
