// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/atomicfile"
)

// The files weir keeps in its data directory.
const (
	fileRootPEM        = "root.pem" // the root to distribute
	fileCARoot         = "ca/root.pem"
	fileCARootKey      = "ca/root-key.pem"
	fileCAIntermediate = "ca/intermediate.pem"
	fileCAIntKey       = "ca/intermediate-key.pem"
	fileTLSCert        = "tls/cert.pem"
	fileTLSKey         = "tls/key.pem"
)

// dataPath resolves a data-directory file.
func dataPath(dataDir, name string) string { return filepath.Join(dataDir, filepath.FromSlash(name)) }

// writeFileAtomic writes data to path with mode perm, creating its
// directory (0700): a crash never leaves half a key behind
// (atomicfile.Write).
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, perm)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// loadOrCreateHierarchy returns the CA hierarchy: a configured
// intermediate, the one in the data directory, or a new one generated and
// saved there (keys at mode 0600; the root's at rootKeyOut instead when
// that is set, outside the data directory: offlineroot.go), whose
// intermediate names the root's CRL, signed there and then with the new
// root's key (rootcrl.go). It also writes <data-dir>/root.pem.
func loadOrCreateHierarchy(cfg Config, now time.Time, rootKeyOut string) (h *ca.Hierarchy, created bool, err error) {
	dd := cfg.DataDir
	use, err := intermediateUse(cfg, acme.DefaultIssuer, now)
	if err != nil {
		return nil, false, err
	}
	switch {
	case cfg.CA.Intermediate.CertFile != "":
		h, err = loadConfiguredIntermediate(cfg.CA, use)
	case exists(dataPath(dd, fileCAIntermediate)):
		h, err = loadDataHierarchy(dd, cfg.CA.Intermediate.Signer, use)
	case cfg.CA.Intermediate.Signer.SignerType() != ca.SignerFile:
		return nil, false, fmt.Errorf("ca.intermediate.signer.type is %s, but the data directory has no intermediate (%s) and weir generates only plaintext keys: "+
			"import one with weir ca import, or set ca.intermediate.cert-file", cfg.CA.Intermediate.Signer.SignerType(), fileCAIntermediate)
	default:
		h, err = ca.GenerateHierarchyWith(cfg.CA.Name, now, ca.HierarchyOptions{NameConstraints: nameConstraints(cfg), RootCRLURL: rootCRLURL(cfg)})
		if err != nil {
			return nil, false, err
		}
		created = true
		err = saveHierarchy(dd, h, rootKeyOut, now)
		h.IntermediateKey = keyBetween(ca.WrapSigner("ca.intermediate", h.IntermediateKey))
	}
	if err != nil {
		return nil, false, err
	}
	if h.Root != nil {
		if err := writeFileAtomic(dataPath(dd, fileRootPEM), ca.EncodeCertPEM(h.Root.Raw), 0o644); err != nil {
			return nil, false, fmt.Errorf("writing %s: %w", fileRootPEM, err)
		}
	}
	return h, created, nil
}

func saveHierarchy(dd string, h *ca.Hierarchy, rootKeyOut string, now time.Time) error {
	rootKey, err := ca.EncodeKeyPEM(h.RootKey)
	if err != nil {
		return err
	}
	// The root's first CRL, listing nothing, while its key is at hand:
	// relying parties that check every CA of a chain need one for the
	// intermediate, which names it.
	rootCRL, _, err := ca.SignRootCRL(h.Root, h.RootKey, ca.RootCRLRequest{Now: now})
	if err != nil {
		return err
	}
	intKey, err := ca.EncodeKeyPEM(h.IntermediateKey)
	if err != nil {
		return err
	}
	rootKeyPath := dataPath(dd, fileCARootKey)
	if rootKeyOut != "" {
		rootKeyPath = rootKeyOut
	}
	if err := writeFileAtomic(rootKeyPath, rootKey, 0o600); err != nil {
		return fmt.Errorf("writing the root key: %w", err)
	}
	// Keys first: a certificate on disk implies its key is there too.
	for _, f := range []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{fileCAIntKey, intKey, 0o600},
		{fileCARootCRL, rootCRL, 0o644},
		{fileCARoot, ca.EncodeCertPEM(h.Root.Raw), 0o644},
		{fileCAIntermediate, ca.EncodeCertPEM(h.Intermediate.Raw), 0o644},
	} {
		if err := writeFileAtomic(dataPath(dd, f.name), f.data, f.perm); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	return nil
}

func readCerts(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	certs, err := ca.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return certs, nil
}

// loadDataHierarchy loads the data directory's intermediate (key sc) and
// root, for use.
func loadDataHierarchy(dd string, sc ca.SignerConfig, use ca.Use) (*ca.Hierarchy, error) {
	ints, err := readCerts(dataPath(dd, fileCAIntermediate))
	if err != nil {
		return nil, err
	}
	var root *x509.Certificate
	if roots, err := readCerts(dataPath(dd, fileCARoot)); err == nil {
		root = roots[0]
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return loadWithKey(root, ints[0], sc, dataPath(dd, fileCAIntKey), use)
}

// loadWithKey opens the intermediate's key (sc, keyFile) and assembles
// the hierarchy for use, releasing the key when LoadHierarchy refuses it.
func loadWithKey(root, inter *x509.Certificate, sc ca.SignerConfig, keyFile string, use ca.Use) (*ca.Hierarchy, error) {
	key, err := openIntermediateKey(sc, keyFile)
	if err != nil {
		return nil, err
	}
	h, err := ca.LoadHierarchy(root, inter, key, use)
	if err != nil {
		key.Close()
	}
	return h, err
}

// loadConfiguredIntermediate loads ca.intermediate for use; its cert-file
// may carry the chain up to the root, or ca.root-file names the root.
func loadConfiguredIntermediate(c CAConfig, use ca.Use) (*ca.Hierarchy, error) {
	chain, err := readCerts(c.Intermediate.CertFile)
	if err != nil {
		return nil, fmt.Errorf("ca.intermediate.cert-file: %w", err)
	}
	var root *x509.Certificate
	if c.RootFile != "" {
		roots, err := readCerts(c.RootFile)
		if err != nil {
			return nil, fmt.Errorf("ca.root-file: %w", err)
		}
		root = roots[0]
	} else if last := chain[len(chain)-1]; len(chain) > 1 && last.CheckSignatureFrom(last) == nil {
		root = last
	}
	return loadWithKey(root, chain[0], c.Intermediate.Signer, c.Intermediate.KeyFile, use)
}

// nameConstraints are the name constraints of a generated hierarchy under
// ca.name-constraints (none without it): the policy's allowed domains and
// IP ranges, and its denied domains excluded, plus weir's own HTTPS names
// other than the host name (localhost, the loopback addresses, and the
// hosts of server.listen and server.external-url).
func nameConstraints(cfg Config) ca.NameConstraints {
	if !cfg.CA.NameConstraints {
		return ca.NameConstraints{}
	}
	var nc ca.NameConstraints
	addDNS := func(list *[]string, d string) {
		d = strings.ToLower(strings.Trim(d, "."))
		if d != "" && !slices.Contains(*list, d) {
			*list = append(*list, d)
		}
	}
	addIPs := func(ns []*net.IPNet) {
		for _, n := range ns {
			if !slices.ContainsFunc(nc.PermittedIPs, func(have *net.IPNet) bool { return have.String() == n.String() }) {
				nc.PermittedIPs = append(nc.PermittedIPs, n)
			}
		}
	}
	for _, d := range cfg.CA.Policy.AllowedDomains {
		addDNS(&nc.PermittedDNS, d)
	}
	for _, d := range cfg.CA.Policy.DeniedDomains {
		addDNS(&nc.ExcludedDNS, d)
	}
	addIPs(ipNets(cfg.CA.Policy.AllowedIPRanges...))
	addDNS(&nc.PermittedDNS, "localhost")
	addIPs(ipNets("127.0.0.0/8", "::1"))
	for _, host := range configuredHosts(cfg.Server.Listen, cfg.Server.ExternalURL) {
		if ip := net.ParseIP(host); ip == nil {
			addDNS(&nc.PermittedDNS, host)
		} else if !ip.IsUnspecified() {
			addIPs(ipNets(host))
		}
	}
	return nc
}

// ipNets are the CIDRs or single addresses of list, read as the config's
// IP lists are (parsePrefixes; entries it refuses are left out, as config
// validation has refused them already), in the form name constraints take.
func ipNets(list ...string) []*net.IPNet {
	ps, _ := parsePrefixes("", list)
	out := make([]*net.IPNet, len(ps))
	for i, p := range ps {
		out[i] = &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
	}
	return out
}

// serverNames are the names weir's own HTTPS certificate covers.
func serverNames(listen, externalURL string) ([]string, []net.IP) {
	dns := []string{"localhost"}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	if h, err := os.Hostname(); err == nil && h != "" && !strings.Contains(h, "_") {
		dns = append(dns, strings.ToLower(h))
	}
	add := func(host string) {
		if host == "" {
			return
		}
		if ip := net.ParseIP(host); ip != nil {
			if !ip.IsUnspecified() && !slices.ContainsFunc(ips, ip.Equal) {
				ips = append(ips, ip)
			}
		} else if !slices.Contains(dns, strings.ToLower(host)) {
			dns = append(dns, strings.ToLower(host))
		}
	}
	for _, host := range configuredHosts(listen, externalURL) {
		add(host)
	}
	return dns, ips
}

// configuredHosts are the hosts of server.listen and server.external-url
// (clients reach weir by the latter, so its host is one of weir's names).
func configuredHosts(listen, externalURL string) []string {
	var hosts []string
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		hosts = append(hosts, host)
	}
	if u, err := url.Parse(externalURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	return hosts
}

// serverCertificate loads server.tls, or reuses or issues weir's own HTTPS
// certificate from its CA (renewed when a third of its life is left or its
// names changed).
func serverCertificate(cfg Config, issuer *ca.CA, now time.Time) (tls.Certificate, error) {
	if cfg.Server.TLS.CertFile != "" {
		return tls.LoadX509KeyPair(cfg.Server.TLS.CertFile, cfg.Server.TLS.KeyFile)
	}
	certPath, keyPath := dataPath(cfg.DataDir, fileTLSCert), dataPath(cfg.DataDir, fileTLSKey)
	dns, ips := serverNames(cfg.Server.Listen, cfg.Server.ExternalURL)
	// Under name constraints, a name they do not permit (the host name,
	// say) would make the whole certificate fail to verify: leave it out.
	h := issuer.Hierarchy()
	dns = slices.DeleteFunc(dns, func(n string) bool { return !h.PermitsDNS(n) })
	ips = slices.DeleteFunc(ips, func(ip net.IP) bool { return !h.PermitsIP(ip) })
	if len(dns) == 0 && len(ips) == 0 {
		return tls.Certificate{}, errors.New("the CA's name constraints permit none of weir's own HTTPS names; configure server.tls")
	}
	if c, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil && c.Leaf != nil {
		left := c.Leaf.NotAfter.Sub(now)
		full := c.Leaf.NotAfter.Sub(c.Leaf.NotBefore)
		chainOK := c.Leaf.CheckSignatureFrom(issuer.Hierarchy().Intermediate) == nil
		if chainOK && left > full/3 && slices.Equal(c.Leaf.DNSNames, dns) && len(c.Leaf.IPAddresses) == len(ips) {
			return c, nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	iss, err := issuer.Issue(ca.IssueRequest{PublicKey: key.Public(), DNSNames: dns, IPAddresses: ips, Backdate: cfg.CA.Backdate})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issuing the server certificate: %w", err)
	}
	keyPEM, err := ca.EncodeKeyPEM(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := writeFileAtomic(certPath, issuer.ChainPEM(iss.DER), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certPath, keyPath)
}

// fingerprint is the SHA-256 of a certificate, as openssl prints it.
func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}
