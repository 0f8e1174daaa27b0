//go:build pkcs11

package ca

import (
	"crypto"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ThalesGroup/crypto11"
)

// PKCS11Built reports whether this build has the pkcs11 signer.
const PKCS11Built = true

// openPKCS11 logs in to the token of c and finds its key pair. The
// crypto11 context keeps a pool of sessions; a session that fails (the
// token removed) makes Sign fail, and a later Sign opens a new one, so a
// token put back is used again without a restart.
func openPKCS11(c PKCS11Config) (crypto.Signer, io.Closer, error) {
	if _, err := os.Stat(c.Module); err != nil {
		return nil, nil, fmt.Errorf("PKCS#11 module %s: %w", c.Module, err)
	}
	pin, err := c.PIN.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("the PIN: %w", err)
	}
	token := "label " + c.TokenLabel
	if c.Slot != nil {
		token = fmt.Sprintf("slot %d", *c.Slot)
	}
	ctx, err := crypto11.Configure(&crypto11.Config{Path: c.Module, TokenLabel: c.TokenLabel, SlotNumber: c.Slot, Pin: string(pin)})
	if err != nil {
		return nil, nil, fmt.Errorf("PKCS#11 module %s, token %s: %w", c.Module, token, explainPKCS11(err))
	}
	var id, label []byte
	if c.KeyID != "" {
		id, _ = decodeHexID(c.KeyID) // Validate checked it
	}
	if c.KeyLabel != "" {
		label = []byte(c.KeyLabel)
	}
	keys, err := ctx.FindKeyPairs(id, label)
	if err == nil && len(keys) == 0 {
		err = fmt.Errorf("no key pair with label %q and id %q (a private key needs a CKA_ID and its public key in the token)", c.KeyLabel, c.KeyID)
	}
	if err == nil && len(keys) > 1 {
		err = fmt.Errorf("%d key pairs have label %q and id %q; set both to pick one", len(keys), c.KeyLabel, c.KeyID)
	}
	if err != nil {
		ctx.Close()
		return nil, nil, fmt.Errorf("PKCS#11 token %s: finding the key: %w", token, err)
	}
	s := keys[0]
	return s, ctx, nil
}

// explainPKCS11 names the likely cause of the errors operators meet.
func explainPKCS11(err error) error {
	switch msg := err.Error(); {
	case strings.Contains(msg, "CKR_PIN_INCORRECT"):
		return fmt.Errorf("wrong PIN (%w)", err)
	case strings.Contains(msg, "CKR_PIN_LOCKED"):
		return fmt.Errorf("the PIN is locked (%w)", err)
	case strings.Contains(msg, "could not find PKCS#11 token"):
		return fmt.Errorf("no such token (%w)", err)
	}
	return err
}
