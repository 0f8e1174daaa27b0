// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package ca

import (
	"crypto"
	"crypto/ed25519"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/miekg/pkcs11"
)

// PKCS#11 3.0 names that miekg/pkcs11 v1.1.2 does not define.
const (
	// ckkECEdwards is CKK_EC_EDWARDS, the key type of an Ed25519 key.
	ckkECEdwards = 0x40
	// ckmEdDSA is CKM_EDDSA; without parameters it is pure Ed25519.
	ckmEdDSA = 0x1057
)

// errSignerOpts marks a Sign refused for its options: the key is fine,
// so finding it again would not help.
var errSignerOpts = errors.New("unsupported signing options")

// pkcs11Ed25519 is an Ed25519 key pair (CKK_EC_EDWARDS) in a token,
// which crypto11 cannot sign with: it signs with CKM_EDDSA on a session
// of its own, opened through miekg/pkcs11. It never initialises or
// finalises the module: the crypto11 context pkcs11Key holds for the
// same token keeps the module initialised (crypto11 counts its users per
// module path, and one C_Initialize/C_Finalize pair is all a process
// may make), and logged in, the login being the application's, not the
// session's. pkcs11Key releases it (release) before it closes that
// context.
type pkcs11Ed25519 struct {
	pub ed25519.PublicKey

	mu      sync.Mutex
	mod     *pkcs11.Ctx // nil once released
	session pkcs11.SessionHandle
	priv    pkcs11.ObjectHandle
}

// findEd25519 looks up the private key c names in its token, the module
// already initialised (by a crypto11 context). It returns nil and no
// error when that is not one Ed25519 private key, leaving the key (or
// the error saying there is none) to crypto11.
func findEd25519(c PKCS11Config, pin string) (*pkcs11Ed25519, error) {
	mod := pkcs11.New(c.Module)
	if mod == nil {
		return nil, fmt.Errorf("PKCS#11 module %s: cannot load it", c.Module)
	}
	k := &pkcs11Ed25519{mod: mod}
	found := false
	defer func() {
		if !found {
			k.release()
		}
	}()
	slot, err := findSlot(mod, c)
	if err != nil {
		return nil, err
	}
	if k.session, err = mod.OpenSession(slot, pkcs11.CKF_SERIAL_SESSION); err != nil {
		return nil, fmt.Errorf("opening a session: %w", err)
	}
	if err := mod.Login(k.session, pkcs11.CKU_USER, pin); err != nil && !errors.Is(err, pkcs11.Error(pkcs11.CKR_USER_ALREADY_LOGGED_IN)) {
		return nil, fmt.Errorf("logging in: %w", err)
	}
	privs, err := k.findObjects(pkcs11.CKO_PRIVATE_KEY, c)
	if err != nil {
		return nil, err
	}
	var edwards int
	for _, h := range privs {
		b, err := k.attribute(h, pkcs11.CKA_KEY_TYPE)
		if err != nil {
			return nil, fmt.Errorf("reading the private key's CKA_KEY_TYPE: %w", err)
		}
		if kt, ok := keyType(b); ok && kt == ckkECEdwards {
			edwards++
		}
	}
	switch {
	case edwards == 0:
		return nil, nil
	case len(privs) > 1:
		return nil, fmt.Errorf("%d private keys (%d of them Ed25519) have label %q and id %q; set both to pick one", len(privs), edwards, c.KeyLabel, c.KeyID)
	}
	k.priv = privs[0]
	pubs, err := k.findObjects(pkcs11.CKO_PUBLIC_KEY, c)
	switch {
	case err != nil:
		return nil, err
	case len(pubs) != 1:
		return nil, fmt.Errorf("the Ed25519 private key with label %q and id %q needs exactly one public key with the same label and id in the token, found %d", c.KeyLabel, c.KeyID, len(pubs))
	}
	point, err := k.attribute(pubs[0], pkcs11.CKA_EC_POINT)
	if err != nil {
		return nil, fmt.Errorf("reading the Ed25519 public key's CKA_EC_POINT: %w", err)
	}
	if k.pub, err = parseEdwardsPoint(point); err != nil {
		return nil, fmt.Errorf("the Ed25519 public key with label %q and id %q: %w", c.KeyLabel, c.KeyID, err)
	}
	found = true
	return k, nil
}

// findSlot is the slot of the token c selects, by number or by label.
func findSlot(mod *pkcs11.Ctx, c PKCS11Config) (uint, error) {
	if c.Slot != nil {
		return uint(*c.Slot), nil
	}
	slots, err := mod.GetSlotList(true)
	if err != nil {
		return 0, fmt.Errorf("listing the slots: %w", err)
	}
	for _, s := range slots {
		if ti, err := mod.GetTokenInfo(s); err == nil && ti.Label == c.TokenLabel {
			return s, nil
		}
	}
	return 0, fmt.Errorf("no token labelled %q", c.TokenLabel)
}

// findObjects lists the objects of class that carry c's key label and id
// (those it sets); a token holds few keys, so one bounded call suffices.
func (k *pkcs11Ed25519) findObjects(class uint, c PKCS11Config) ([]pkcs11.ObjectHandle, error) {
	tmpl := []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class)}
	if c.KeyLabel != "" {
		tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_LABEL, c.KeyLabel))
	}
	if c.KeyID != "" {
		id, _ := decodeHexID(c.KeyID) // Validate checked it
		tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_ID, id))
	}
	if err := k.mod.FindObjectsInit(k.session, tmpl); err != nil {
		return nil, fmt.Errorf("looking the key up: %w", err)
	}
	objs, _, err := k.mod.FindObjects(k.session, 64)
	if ferr := k.mod.FindObjectsFinal(k.session); err == nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("looking the key up: %w", err)
	}
	return objs, nil
}

// attribute reads one attribute of an object.
func (k *pkcs11Ed25519) attribute(h pkcs11.ObjectHandle, typ uint) ([]byte, error) {
	attrs, err := k.mod.GetAttributeValue(k.session, h, []*pkcs11.Attribute{pkcs11.NewAttribute(typ, nil)})
	if err != nil {
		return nil, err
	}
	if len(attrs) != 1 {
		return nil, fmt.Errorf("the token returned %d attributes for one", len(attrs))
	}
	return attrs[0].Value, nil
}

// keyType reads a CKA_KEY_TYPE, a CK_ULONG in the machine's byte order;
// ok is false when it has neither CK_ULONG size.
func keyType(b []byte) (uint, bool) {
	switch len(b) {
	case 8:
		return uint(binary.NativeEndian.Uint64(b)), true
	case 4:
		return uint(binary.NativeEndian.Uint32(b)), true
	}
	return 0, false
}

// parseEdwardsPoint reads an Ed25519 CKA_EC_POINT: PKCS#11 3.0 says the
// DER OCTET STRING of the 32-byte point, and some tokens (SoftHSM2 for
// an imported key) store the 32 bytes alone. Both are accepted.
func parseEdwardsPoint(b []byte) (ed25519.PublicKey, error) {
	if len(b) == ed25519.PublicKeySize {
		return ed25519.PublicKey(b), nil
	}
	var inner []byte
	if rest, err := asn1.Unmarshal(b, &inner); err == nil && len(rest) == 0 && len(inner) == ed25519.PublicKeySize {
		return ed25519.PublicKey(inner), nil
	}
	return nil, fmt.Errorf("CKA_EC_POINT is %d bytes, neither the %d-byte Ed25519 point nor a DER OCTET STRING of one", len(b), ed25519.PublicKeySize)
}

// Public implements crypto.Signer: an ed25519.PublicKey.
func (k *pkcs11Ed25519) Public() crypto.PublicKey { return k.pub }

// Sign implements crypto.Signer for pure Ed25519: msg is the message
// itself, and opts must not name a hash (nor an Ed25519ctx context),
// which CKM_EDDSA without parameters does not do.
func (k *pkcs11Ed25519) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := checkEd25519Opts(opts); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mod == nil {
		return nil, errors.New("the Ed25519 key's PKCS#11 session is closed")
	}
	if err := k.mod.SignInit(k.session, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmEdDSA, nil)}, k.priv); err != nil {
		return nil, fmt.Errorf("C_SignInit (CKM_EDDSA): %w", err)
	}
	sig, err := k.mod.Sign(k.session, msg)
	if err != nil {
		return nil, fmt.Errorf("C_Sign (CKM_EDDSA): %w", err)
	}
	if len(sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("C_Sign (CKM_EDDSA) returned %d bytes, want an Ed25519 signature's %d", len(sig), ed25519.SignatureSize)
	}
	return sig, nil
}

// checkEd25519Opts accepts the options of pure Ed25519 only.
func checkEd25519Opts(opts crypto.SignerOpts) error {
	if opts == nil {
		return nil
	}
	if h := opts.HashFunc(); h != 0 {
		return fmt.Errorf("%w: an Ed25519 key in a PKCS#11 token signs the message itself (pure Ed25519, opts.HashFunc() == 0), not a %v digest", errSignerOpts, h)
	}
	if o, ok := opts.(*ed25519.Options); ok && o.Context != "" {
		return fmt.Errorf("%w: an Ed25519 key in a PKCS#11 token signs pure Ed25519, without an Ed25519ctx context", errSignerOpts)
	}
	return nil
}

// release closes the key's session (its login, the application's, stays
// for the crypto11 context) and drops the module handle; Sign fails
// from then on.
func (k *pkcs11Ed25519) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mod == nil {
		return
	}
	_ = k.mod.CloseSession(k.session) // a lost session is already closed
	k.mod.Destroy()
	k.mod = nil
}
