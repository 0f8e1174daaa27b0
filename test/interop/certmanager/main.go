// SPDX-License-Identifier: Apache-2.0

// Command cmflow drives weir with cert-manager's ACME client: the package
// github.com/cert-manager/cert-manager/third_party/forked/acme at the
// release go.mod pins, unchanged, configured as cert-manager configures it
// (an RSA 2048 account key, pkg/acme/util.RetryBackoff, a 90 s HTTP
// timeout, the issuer's CA bundle) and called in the order cert-manager's
// controllers call it:
//
//   - account (pkg/issuer/acme/setup.go): Register, and on
//     ErrAccountAlreadyExists GetReg; UpdateReg when the e-mail changes;
//   - order (pkg/controller/acmeorders): AuthorizeOrder with notAfter from
//     the Certificate's duration, and replaces (RFC 9773) when renewing,
//     retried without it when the server rejects it; GetAuthorization for
//     each authorization; GetOrder; CreateOrderCert with the CSR's DER;
//     ListCertAlternates and FetchCert; and, as after an update of the
//     Order resource that was lost, CreateOrderCert again (with another
//     CSR too, whose 403 sends cert-manager to GetOrder and FetchCert);
//   - challenge (pkg/controller/acmechallenges): GetAuthorization, Accept
//     of a challenge built from its URL and token alone, WaitAuthorization
//     within 2 minutes; http-01 served on -http01, dns-01 written into the
//     test DNS server's TXT directory (-txt-dir);
//   - readiness (pkg/controller/certificates/readiness): GetRenewalInfo.
//
// renewalInfo and replaces are what cert-manager does with its alpha
// feature gate ACMEUseARI on; without it, it skips those two calls.
//
// Kubernetes is not involved: this is the client half of cert-manager, the
// part that speaks ACME. It writes each issued chain to -out, for the
// interop script's openssl checks, and fails on the first step whose
// result is not what cert-manager needs.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	acmeutil "github.com/cert-manager/cert-manager/pkg/acme/util"
	acme "github.com/cert-manager/cert-manager/third_party/forked/acme"
)

func main() {
	dir := flag.String("directory", "", "weir's directory URL")
	roots := flag.String("ca-bundle", "", "PEM file of the roots to trust for the directory (weir's root.pem)")
	http01 := flag.String("http01", "", "loopback host:port to answer http-01 on (weir's challenges.http-01.port)")
	txtDir := flag.String("txt-dir", "", "TXT record directory of the test DNS server (one file per name)")
	out := flag.String("out", "", "directory to write the issued chains to")
	flag.Parse()
	if *dir == "" || *roots == "" || *http01 == "" || *txtDir == "" || *out == "" {
		log.Fatal("usage: cmflow -directory URL -ca-bundle FILE -http01 HOST:PORT -txt-dir DIR -out DIR")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, *dir, *roots, *http01, *txtDir, *out); err != nil {
		log.Fatalf("cmflow: %v", err)
	}
}

// step logs one step of the flow, as the interop log shows it.
func step(format string, args ...any) { log.Printf("cert-manager: "+format, args...) }

func run(ctx context.Context, dirURL, rootsFile, http01Addr, txtDir, out string) error {
	pemRoots, err := os.ReadFile(rootsFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemRoots) {
		return fmt.Errorf("%s holds no certificate", rootsFile)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	// pkg/acme/accounts: the client cert-manager builds for an issuer.
	newClient := func() *acme.Client {
		return &acme.Client{
			Key: key,
			HTTPClient: &http.Client{
				Timeout:   90 * time.Second,
				Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: nil},
			},
			DirectoryURL: dirURL,
			UserAgent:    "weir-interop cert-manager-acme-client",
			RetryBackoff: acmeutil.RetryBackoff,
		}
	}

	responder := newHTTP01(http01Addr)
	if err := responder.start(); err != nil {
		return err
	}
	defer responder.stop()

	cl := newClient()
	acct, err := register(ctx, cl, "mailto:cm@weir.test")
	if err != nil {
		return err
	}
	step("registered account %s", acct.URI)
	// A restarted cert-manager registers again with the key in its Secret.
	again, err := register(ctx, newClient(), "mailto:cm@weir.test")
	if err != nil {
		return err
	}
	if again.URI != acct.URI {
		return fmt.Errorf("registering the same key again gave account %s, want %s", again.URI, acct.URI)
	}
	step("registered again with the same key: the same account")
	// setup.go: the Issuer's e-mail changed.
	acct.Contact = []string{"mailto:platform@weir.test"}
	updated, err := cl.UpdateReg(ctx, acct)
	if err != nil {
		return fmt.Errorf("UpdateReg: %w", err)
	}
	if !slices.Equal(updated.Contact, acct.Contact) {
		return fmt.Errorf("UpdateReg: contact %v, want %v", updated.Contact, acct.Contact)
	}
	step("updated the account's contact")

	// A Certificate with a duration of 30 days, solved by http-01.
	names := []string{"cm1.weir.test", "cm2.weir.test"}
	duration := 720 * time.Hour
	first, err := issue(ctx, cl, order{names: names, duration: duration, solver: "http-01", refinalize: true}, responder, txtDir)
	if err != nil {
		return err
	}
	if d := first[0].NotAfter.Sub(first[0].NotBefore); d > duration+time.Hour || d < duration-2*time.Hour {
		return fmt.Errorf("certificate lifetime %s, want about the requested %s", d, duration)
	}
	if err := writeChain(filepath.Join(out, "http01.pem"), first); err != nil {
		return err
	}

	// Readiness: the renewal window from ARI.
	ri, err := cl.GetRenewalInfo(ctx, first[0])
	if err != nil {
		return fmt.Errorf("GetRenewalInfo: %w", err)
	}
	w := ri.SuggestedWindow
	if !w.Start.After(first[0].NotBefore) || !w.End.Before(first[0].NotAfter) || ri.RetryAfter <= 0 {
		return fmt.Errorf("renewalInfo window %s to %s, Retry-After %s: want a window inside %s to %s and a Retry-After",
			w.Start, w.End, ri.RetryAfter, first[0].NotBefore, first[0].NotAfter)
	}
	step("renewalInfo: renew between %s and %s, ask again in %s", w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339), ri.RetryAfter)

	// Renewal: a new order that replaces the first certificate. Its
	// authorizations are still valid, so no challenge is solved.
	certID, err := acme.CertificateARIID(first[0])
	if err != nil {
		return err
	}
	renewed, err := issue(ctx, cl, order{names: names, duration: duration, solver: "http-01", replaces: certID}, responder, txtDir)
	if err != nil {
		return err
	}
	if renewed[0].SerialNumber.Cmp(first[0].SerialNumber) == 0 {
		return errors.New("the renewal returned the first certificate again")
	}
	if err := writeChain(filepath.Join(out, "renewed.pem"), renewed); err != nil {
		return err
	}
	// A second renewal that names the same predecessor is refused
	// (alreadyReplaced); cert-manager then orders without replaces.
	if _, err := issue(ctx, cl, order{names: names, duration: duration, solver: "http-01", replaces: certID, wantReplacesRejected: true}, responder, txtDir); err != nil {
		return err
	}

	// A wildcard and its base name, solved by dns-01.
	wild, err := issue(ctx, cl, order{names: []string{"*.cmw.weir.test", "cmw.weir.test"}, solver: "dns-01"}, responder, txtDir)
	if err != nil {
		return err
	}
	return writeChain(filepath.Join(out, "dns01.pem"), wild)
}

// register is pkg/issuer/acme/setup.go's registerAccount: Register, and
// GetReg when the key already has an account.
func register(ctx context.Context, cl *acme.Client, contact string) (*acme.Account, error) {
	acct, err := cl.Register(ctx, &acme.Account{Contact: []string{contact}}, acme.AcceptTOS)
	if errors.Is(err, acme.ErrAccountAlreadyExists) {
		return cl.GetReg(ctx, "")
	}
	if err != nil {
		return nil, fmt.Errorf("Register: %w", err)
	}
	return acct, nil
}

// order is what an Order resource asks for.
type order struct {
	names                []string
	duration             time.Duration // 0: no notAfter
	solver               string        // http-01 or dns-01
	replaces             string        // the ARI certificate ID renewed, or ""
	wantReplacesRejected bool          // replaces must be refused as already replaced
	refinalize           bool          // then finalize again, as after a lost update
}

// issue runs one Order through the order and challenge controllers' calls
// and returns the issued chain, leaf first.
func issue(ctx context.Context, cl *acme.Client, o order, http01 *http01Server, txtDir string) ([]*x509.Certificate, error) {
	var opts []acme.OrderOption
	if o.duration > 0 {
		opts = append(opts, acme.WithOrderNotAfter(time.Now().Add(o.duration)))
	}
	before := len(opts)
	if o.replaces != "" {
		opts = append(opts, acme.WithOrderReplacesCertID(o.replaces))
	}
	ids := acme.DomainIDs(o.names...)
	ao, err := cl.AuthorizeOrder(ctx, ids, opts...)
	var ae *acme.Error
	rejected := err != nil && o.replaces != "" && errors.As(err, &ae) && ae.ProblemType == "urn:ietf:params:acme:error:alreadyReplaced"
	if rejected != o.wantReplacesRejected {
		return nil, fmt.Errorf("AuthorizeOrder %v replacing %q: error %v; want a rejection as already replaced: %t", o.names, o.replaces, err, o.wantReplacesRejected)
	}
	if rejected {
		step("newOrder replacing %s refused (%s): ordering without replaces", o.replaces, ae.ProblemType)
		ao, err = cl.AuthorizeOrder(ctx, ids, opts[:before]...)
	}
	if err != nil {
		return nil, fmt.Errorf("AuthorizeOrder %v: %w", o.names, err)
	}
	step("order %s for %v: %s", ao.URI, o.names, ao.Status)

	solved := 0
	for _, u := range ao.AuthzURLs {
		authz, err := cl.GetAuthorization(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("GetAuthorization %s: %w", u, err)
		}
		if authz.Status == acme.StatusValid {
			continue // reused: cert-manager creates no Challenge
		}
		if err := solve(ctx, cl, authz, o.solver, http01, txtDir); err != nil {
			return nil, err
		}
		solved++
	}
	if (o.replaces != "" && !rejected) && solved > 0 {
		return nil, fmt.Errorf("renewal solved %d challenges; the first order's authorizations should have been reused", solved)
	}

	cur, err := cl.GetOrder(ctx, ao.URI)
	if err != nil {
		return nil, fmt.Errorf("GetOrder: %w", err)
	}
	if cur.Status != acme.StatusReady {
		if cur, err = cl.WaitOrder(ctx, ao.URI); err != nil {
			return nil, fmt.Errorf("WaitOrder: %w", err)
		}
	}
	csr, err := newCSR(o.names)
	if err != nil {
		return nil, err
	}
	der, certURL, err := cl.CreateOrderCert(ctx, cur.FinalizeURL, csr, true)
	if err != nil {
		return nil, fmt.Errorf("CreateOrderCert: %w", err)
	}
	alts, err := cl.ListCertAlternates(ctx, certURL)
	if err != nil {
		return nil, fmt.Errorf("ListCertAlternates: %w", err)
	}
	fetched, err := cl.FetchCert(ctx, certURL, true)
	if err != nil {
		return nil, fmt.Errorf("FetchCert: %w", err)
	}
	if !sameChain(der, fetched) {
		return nil, errors.New("FetchCert returned another chain than CreateOrderCert")
	}
	chain := make([]*x509.Certificate, len(der))
	for i, d := range der {
		if chain[i], err = x509.ParseCertificate(d); err != nil {
			return nil, fmt.Errorf("certificate %d of the chain: %w", i, err)
		}
	}
	if len(chain) != 2 {
		return nil, fmt.Errorf("chain of %d certificates, want the leaf and the intermediate", len(chain))
	}
	got := slices.Clone(chain[0].DNSNames)
	want := slices.Clone(o.names)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("certificate names %v, want %v", got, want)
	}
	step("certificate %x for %v (%d alternate chains)", chain[0].SerialNumber, o.names, len(alts))
	if o.refinalize {
		if err := refinalize(ctx, cl, ao.URI, cur.FinalizeURL, o.names, csr, der); err != nil {
			return nil, err
		}
	}
	return chain, nil
}

// refinalize is finalizeOrder's recovery when cert-manager lost track of
// a finalize it made. Finalizing again with the Order's CSR, what
// cert-manager does, returns the order's certificate (weir treats it as a
// retry). Finalizing with another CSR is refused with 403, and cert-manager
// then reads the order, valid, and fetches the certificate it names.
func refinalize(ctx context.Context, cl *acme.Client, orderURL, finalizeURL string, names []string, csr []byte, want [][]byte) error {
	again, _, err := cl.CreateOrderCert(ctx, finalizeURL, csr, true)
	if err != nil {
		return fmt.Errorf("finalizing a valid order again with its CSR: %w", err)
	}
	if !sameChain(again, want) {
		return errors.New("finalizing a valid order again with its CSR returned another certificate")
	}
	step("finalizing again with the same CSR: the same certificate")

	other, err := newCSR(names) // a new key
	if err != nil {
		return err
	}
	_, _, err = cl.CreateOrderCert(ctx, finalizeURL, other, true)
	var ae *acme.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusForbidden {
		return fmt.Errorf("finalizing a valid order with another CSR: error %v, want a 403", err)
	}
	o, err := cl.GetOrder(ctx, orderURL)
	if err != nil {
		return fmt.Errorf("GetOrder after the refused finalize: %w", err)
	}
	if o.Status != acme.StatusValid || o.CertURL == "" {
		return fmt.Errorf("order after the refused finalize: %s, certificate %q; want valid with a certificate", o.Status, o.CertURL)
	}
	got, err := cl.FetchCert(ctx, o.CertURL, true)
	if err != nil {
		return fmt.Errorf("FetchCert after the refused finalize: %w", err)
	}
	if !sameChain(got, want) {
		return errors.New("the order's certificate after the refused finalize is not the one issued")
	}
	step("finalizing again with another CSR: %d %s; the order is valid with the same certificate", ae.StatusCode, ae.ProblemType)
	return nil
}

// solve presents the challenge of type typ and accepts it as the
// challenge controller does.
func solve(ctx context.Context, cl *acme.Client, authz *acme.Authorization, typ string, http01 *http01Server, txtDir string) error {
	var ch *acme.Challenge
	for _, c := range authz.Challenges {
		if c.Type == typ {
			ch = c
		}
	}
	if ch == nil {
		return fmt.Errorf("authorization %s for %s offers no %s challenge", authz.URI, authz.Identifier.Value, typ)
	}
	switch typ {
	case "http-01":
		resp, err := cl.HTTP01ChallengeResponse(ch.Token)
		if err != nil {
			return err
		}
		http01.set(cl.HTTP01ChallengePath(ch.Token), resp)
	case "dns-01":
		value, err := cl.DNS01ChallengeRecord(ch.Token)
		if err != nil {
			return err
		}
		if err := addTXT(txtDir, "_acme-challenge."+authz.Identifier.Value, value); err != nil {
			return err
		}
	}
	// syncChallengeStatus, then acceptChallenge.
	if _, err := cl.GetAuthorization(ctx, authz.URI); err != nil {
		return fmt.Errorf("GetAuthorization %s: %w", authz.URI, err)
	}
	if _, err := cl.Accept(ctx, &acme.Challenge{URI: ch.URI, Token: ch.Token}); err != nil {
		return fmt.Errorf("Accept %s: %w", ch.URI, err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	got, err := cl.WaitAuthorization(waitCtx, authz.URI)
	if err != nil {
		return fmt.Errorf("WaitAuthorization %s: %w", authz.URI, err)
	}
	step("authorization for %s (wildcard %t) %s by %s", authz.Identifier.Value, authz.Wildcard, got.Status, typ)
	return nil
}

// sameChain reports whether two DER chains are the same certificates.
func sameChain(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }

// newCSR is the request cert-manager's default Certificate makes: a new
// RSA 2048 key and the names as SANs, without a common name.
func newCSR(names []string) ([]byte, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: names}, k)
}

// addTXT adds value to the TXT records of fqdn in the test DNS server's
// directory (test/interop/dnsserver -txt-dir): a file named after the
// name, one value per line, replaced by a rename.
func addTXT(dir, fqdn, value string) error {
	name := strings.ToLower(strings.TrimSuffix(fqdn, "."))
	path := filepath.Join(dir, name)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp.cm")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(old, value+"\n"...)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeChain writes chain as PEM to path.
func writeChain(path string, chain []*x509.Certificate) error {
	var b []byte
	for _, c := range chain {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return os.WriteFile(path, b, 0o644)
}

// http01Server answers http-01 requests with the key authorizations set.
type http01Server struct {
	addr string
	mu   sync.Mutex
	resp map[string]string // path -> key authorization
	srv  *http.Server
	done chan error
}

func newHTTP01(addr string) *http01Server {
	return &http01Server{addr: addr, resp: map[string]string{}, done: make(chan error, 1)}
}

func (s *http01Server) set(path, keyAuth string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resp[path] = keyAuth
}

func (s *http01Server) start() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		v, ok := s.resp[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(v))
	})}
	go func() { s.done <- s.srv.Serve(ln) }()
	return nil
}

func (s *http01Server) stop() {
	s.srv.Close()
	<-s.done
}
