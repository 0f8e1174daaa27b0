// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// The ceremonies of weir ca: the root stays offline (weir init
// -root-key-out, TakeRootOffline), a new intermediate's key and CSR are
// made where the intermediate will live (NewIntermediateKey), the root
// signs the CSR on the offline host (SignIntermediateCSR), and the
// data directory takes the result (ImportIntermediate). The root also
// signs its CRL there, revoking intermediates (SignRootCRL), which serve
// serves (rootcrl.go). serve never reads the root's key.

// RootKey names the offline root's key: a file (plaintext or encrypted,
// as Signer says) or a PKCS#11 token.
type RootKey struct {
	KeyFile string
	Signer  ca.SignerConfig
}

// open opens the root's key.
func (rk RootKey) open() (ca.Signer, error) {
	if !rk.Signer.NeedsKeyFile() {
		rk.KeyFile = ""
	}
	return ca.OpenSigner("the root key", rk.Signer, rk.KeyFile)
}

// RootCRLURL is the URL of the root's CRL that the intermediates of the
// configuration cfg name (weir ca sign-intermediate's default).
func RootCRLURL(cfg Config) string { return rootCRLURL(cfg) }

// DefaultRootCRLValidity is how long a root CRL is valid unless the
// ceremony says otherwise (ca.DefaultRootCRLValidity says why).
const DefaultRootCRLValidity = ca.DefaultRootCRLValidity

// RootCRLSigning is what SignRootCRL signed.
type RootCRLSigning struct {
	Number     *big.Int
	NextUpdate time.Time
	// Added are the intermediates this signing revoked (subject and
	// serial); Listed is how many the CRL lists in all.
	Added  []string
	Listed int
}

// SignRootCRL is the root CRL's ceremony (weir ca sign-root-crl): with
// the root whose certificate is in rootCertFile and whose key rk names,
// it signs the root's next CRL into out, a DER file for ca.root-crl-file.
// out is also the state: when it exists, it must be this root's CRL, and
// the new one takes its number plus one and keeps its entries. revoke are
// the certificate files of the intermediates to add, with reason (an RFC
// 5280 name, ca.ReasonFromString); validity is nextUpdate − thisUpdate
// (0: DefaultRootCRLValidity).
func SignRootCRL(rootCertFile string, rk RootKey, out string, revoke []string, reason string, validity time.Duration, now time.Time) (*RootCRLSigning, error) {
	roots, err := readCerts(rootCertFile)
	if err != nil {
		return nil, fmt.Errorf("the root certificate: %w", err)
	}
	req := ca.RootCRLRequest{Now: now, Validity: validity}
	if len(revoke) > 0 {
		if req.Reason, err = ca.ReasonFromString(reason); err != nil {
			return nil, err
		}
	}
	if prev, err := os.ReadFile(out); err == nil {
		if req.Previous, err = ca.ParseRootCRL(prev, roots[0]); err != nil {
			return nil, fmt.Errorf("%s, the previous root CRL: %w", out, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, f := range revoke {
		certs, err := readCerts(f)
		if err != nil {
			return nil, err
		}
		req.Revoke = append(req.Revoke, certs[0])
	}
	key, err := rk.open()
	if err != nil {
		return nil, err
	}
	defer key.Close()
	der, added, err := ca.SignRootCRL(roots[0], key, req)
	if err != nil {
		return nil, err
	}
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(out, der, 0o644); err != nil {
		return nil, err
	}
	signed := &RootCRLSigning{Number: rl.Number, NextUpdate: rl.NextUpdate, Listed: len(rl.RevokedCertificateEntries)}
	for _, c := range added {
		signed.Added = append(signed.Added, fmt.Sprintf("%q (serial %s)", c.Subject.String(), ca.SerialHex(c.SerialNumber)))
	}
	return signed, nil
}

// NewIntermediateKey makes a P-256 key for a new intermediate named cn
// (organisation org), writes it to keyOut (mode 0600, never over a file;
// encrypted PKCS#8 under the passphrase in passFile when that is set)
// and returns the CSR's PEM.
func NewIntermediateKey(cn, org, keyOut, passFile string) ([]byte, error) {
	if cn == "" {
		return nil, errors.New("the intermediate needs a name (its subject's common name)")
	}
	var pass []byte
	if passFile != "" {
		var err error
		if pass, err = (ca.SecretSource{File: passFile}).Read(); err != nil {
			return nil, err
		}
	}
	if exists(keyOut) {
		return nil, fmt.Errorf("%s exists; weir never overwrites a key", keyOut)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	subject := pkix.Name{CommonName: cn}
	if org != "" {
		subject.Organization = []string{org}
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		return nil, err
	}
	var keyPEM []byte
	if len(pass) > 0 {
		keyPEM, err = ca.EncodeEncryptedKeyPEM(key, pass)
	} else {
		keyPEM, err = ca.EncodeKeyPEM(key)
	}
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(keyOut, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", keyOut, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), nil
}

// SignIntermediateCSR signs the CSR in csrPEM with the root whose
// certificate is in rootCertFile and whose key rk names, the new
// intermediate naming the root's CRL at rootCRLURL (when set) as its CRL
// distribution point, and returns it followed by the root, in PEM (what
// ImportIntermediate and ca.intermediate.cert-file take).
func SignIntermediateCSR(rootCertFile string, rk RootKey, csrPEM []byte, now time.Time, rootCRLURL string) ([]byte, error) {
	roots, err := readCerts(rootCertFile)
	if err != nil {
		return nil, fmt.Errorf("the root certificate: %w", err)
	}
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("the CSR is not a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the CSR: %w", err)
	}
	key, err := rk.open()
	if err != nil {
		return nil, err
	}
	defer key.Close()
	inter, err := ca.SignIntermediate(roots[0], key, csr, now, rootCRLURL)
	if err != nil {
		return nil, err
	}
	return append(ca.EncodeCertPEM(inter.Raw), ca.EncodeCertPEM(roots[0].Raw)...), nil
}

// ImportIntermediate makes the intermediate in certFile (its chain may
// follow) the data directory's, with its key: keyFile (a plaintext or
// encrypted key file, as ca.intermediate.signer says, copied as it is),
// or, for a pkcs11 signer, the token's key the configuration names. The
// intermediate must chain to the data directory's root and match its
// key. It replaces the data directory's intermediate only while the
// store holds no unexpired certificate of it (checkReplaceable); the
// intermediate and key it replaces are kept beside, renamed with the
// time. weir serve uses it from its next start.
func ImportIntermediate(ctx context.Context, cfg Config, certFile, keyFile string, now time.Time) ([]string, error) {
	if cfg.CA.Intermediate.CertFile != "" {
		return nil, fmt.Errorf("ca.intermediate.cert-file is set (%s): weir issues with that file, so replace it there instead", cfg.CA.Intermediate.CertFile)
	}
	slot := intermediateSlot{id: acme.DefaultIssuer, key: "ca.intermediate", signer: cfg.CA.Intermediate.Signer,
		certName: fileCAIntermediate, keyName: fileCAIntKey}
	return installIntermediate(ctx, cfg, slot, certFile, keyFile, now)
}

// intermediateSlot is where installIntermediate puts an intermediate:
// the issuer it signs for (its ID in the store), the configuration's key
// that describes it (ca.intermediate, an entry of ca.issuers), the
// signer its key opens with, and its files in the data directory.
type intermediateSlot struct {
	id, key           string
	signer            ca.SignerConfig
	certName, keyName string
}

// installIntermediate is ImportIntermediate into slot.
func installIntermediate(ctx context.Context, cfg Config, slot intermediateSlot, certFile, keyFile string, now time.Time) ([]string, error) {
	dd, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dd
	sc := slot.signer
	switch {
	case sc.NeedsKeyFile() && keyFile == "":
		return nil, fmt.Errorf("the new intermediate's key file is needed (%s.signer.type is %s)", slot.key, sc.SignerType())
	case !sc.NeedsKeyFile() && keyFile != "":
		return nil, fmt.Errorf("%s.signer.type is %s: the key is in the token, so give no key file", slot.key, sc.SignerType())
	}
	roots, err := readCerts(dataPath(dd, fileCARoot))
	if err != nil {
		return nil, fmt.Errorf("the data directory's root: %w", err)
	}
	chain, err := readCerts(certFile)
	if err != nil {
		return nil, err
	}
	use, err := issuingUse(cfg, now)
	if err != nil {
		return nil, err
	}
	use.Installing = true
	signer, err := openIntermediateKey(sc, keyFile)
	if err != nil {
		return nil, err
	}
	defer signer.Close()
	if err := ca.CheckIntermediate(roots[0], chain[0], signer, use); err != nil {
		return nil, err
	}
	if exists(dataPath(dd, slot.certName)) {
		if err := checkReplaceable(ctx, cfg, slot, now); err != nil {
			return nil, err
		}
	}
	var keyPEM []byte
	if keyFile != "" {
		if keyPEM, err = os.ReadFile(keyFile); err != nil {
			return nil, err
		}
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for _, name := range []string{slot.certName, slot.keyName} {
		// os.Rename replaces its target: a second replacement within the
		// same second would overwrite the first one's kept key.
		if p := dataPath(dd, name); exists(p) && exists(p+".replaced-"+stamp) {
			return nil, fmt.Errorf("nothing was changed: %s.replaced-%s, kept by a replacement in the same second, exists and weir never overwrites a kept key; run it again", name, stamp)
		}
	}
	var kept []string
	if err := os.MkdirAll(filepath.Dir(dataPath(dd, slot.certName)), 0o700); err != nil {
		return nil, err
	}
	for _, name := range []string{slot.certName, slot.keyName} {
		p := dataPath(dd, name)
		if err := os.Rename(p, p+".replaced-"+stamp); err == nil {
			kept = append(kept, name+".replaced-"+stamp)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	// The key first: a certificate on disk implies its key is there too.
	if keyPEM != nil {
		if err := writeFileAtomic(dataPath(dd, slot.keyName), keyPEM, 0o600); err != nil {
			return nil, err
		}
	}
	if err := writeFileAtomic(dataPath(dd, slot.certName), ca.EncodeCertPEM(chain[0].Raw), 0o644); err != nil {
		return nil, err
	}
	return kept, nil
}

// checkReplaceable refuses to replace the intermediate of slot while the
// store holds unexpired certificates of its issuer, revoked or not: their
// revocations go on the CRL of that issuer, which the new intermediate
// would sign, and a relying party accepts a CRL only from the
// certificate's own issuer, its name and key (RFC 5280 §6.3.3), so they
// could no longer be revoked. A store it cannot read is a refusal too.
// The safe way keeps the old intermediate as an issuer of its own: a new
// issuer (weir ca add-issuer) made active, and the old one renew-early.
func checkReplaceable(ctx context.Context, cfg Config, slot intermediateSlot, now time.Time) error {
	u, err := unexpiredOf(ctx, cfg, slot.id, now)
	if err != nil {
		return fmt.Errorf("nothing was changed: the store cannot be read to tell whether it holds unexpired certificates of the intermediate this would replace (%s, the issuer %s), whose revocations it must keep signing: %w", slot.certName, slot.id, err)
	}
	if u.N == 0 {
		return nil
	}
	instead := fmt.Sprintf("add the new intermediate as an issuer of its own instead (weir ca add-issuer -id ID -cert FILE -key FILE), list it in ca.issuers, set ca.active-issuer: ID and restart, then set renew-early: true on %s", slot.key)
	if slot.id != acme.DefaultIssuer {
		instead = fmt.Sprintf("add the new intermediate under another id instead (weir ca add-issuer -id NEW ...), list it in ca.issuers, set ca.active-issuer: NEW and restart, then set renew-early: true on the entry %s", slot.id)
	}
	return fmt.Errorf("nothing was changed: the store holds %d unexpired certificate(s) of the issuer %s (%s), the last until %s, signed by the intermediate this would replace (%s); "+
		"their revocations would go on a CRL the new intermediate signs, which relying parties refuse for them (RFC 5280 §6.3.3). "+
		"To rotate, %s (docs/operations.md, \"Rotating the intermediate\"); the old intermediate keeps signing their CRL until they expire",
		u.N, slot.id, slot.key, u.Last.UTC().Format(time.RFC3339), slot.certName, instead)
}
