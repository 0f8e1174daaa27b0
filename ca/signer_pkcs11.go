// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package ca

import (
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ThalesGroup/crypto11"
)

// PKCS11Built reports whether this build has the pkcs11 signer.
const PKCS11Built = true

// openPKCS11 logs in to the token of c and finds its key pair.
func openPKCS11(c PKCS11Config) (crypto.Signer, io.Closer, error) {
	if _, err := os.Stat(c.Module); err != nil {
		return nil, nil, fmt.Errorf("PKCS#11 module %s: %w", c.Module, err)
	}
	pin, err := c.PIN.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("the PIN: %w", err)
	}
	k := &pkcs11Key{c: c, pin: string(pin)}
	if err := k.open(); err != nil {
		return nil, nil, err
	}
	return k, k, nil
}

// pkcs11Key is a key pair in a token. A token that goes away (pulled
// out, its HSM restarted) leaves the key's handles and sessions invalid
// even once it is back; so a failed Sign finds the key again, with a new
// context if need be, and signs once more: a token put back is used
// again without a restart. An Ed25519 key, which crypto11 cannot sign
// with, is a pkcs11Ed25519 (signer_pkcs11_ed25519.go) found and
// recovered the same way.
type pkcs11Key struct {
	c   PKCS11Config
	pin string

	mu     sync.Mutex
	closed bool
	ctx    *crypto11.Context
	key    crypto.Signer    // a crypto11.Signer, or a *pkcs11Ed25519
	pub    crypto.PublicKey // the key's, for good: a token that returns another key is refused
}

// open configures a context and finds the key; the caller holds mu (or
// owns k alone).
func (k *pkcs11Key) open() error {
	token := "label " + k.c.TokenLabel
	if k.c.Slot != nil {
		token = fmt.Sprintf("slot %d", *k.c.Slot)
	}
	ctx, err := crypto11.Configure(&crypto11.Config{Path: k.c.Module, TokenLabel: k.c.TokenLabel, SlotNumber: k.c.Slot, Pin: k.pin})
	if err != nil {
		return fmt.Errorf("PKCS#11 module %s, token %s: %w", k.c.Module, token, explainPKCS11(err))
	}
	key, err := k.find(ctx)
	if err != nil {
		ctx.Close()
		return fmt.Errorf("PKCS#11 token %s: finding the key: %w", token, err)
	}
	if k.pub != nil && !samePublic(k.pub, key.Public()) {
		release(key)
		ctx.Close()
		return fmt.Errorf("PKCS#11 token %s: the key labelled %q id %q is no longer the one weir started with", token, k.c.KeyLabel, k.c.KeyID)
	}
	k.ctx, k.key, k.pub = ctx, key, key.Public()
	return nil
}

// find looks the key pair up in ctx: exactly one must match. An Ed25519
// key is signed with by a pkcs11Ed25519, any other by crypto11.
func (k *pkcs11Key) find(ctx *crypto11.Context) (crypto.Signer, error) {
	ed, err := findEd25519(k.c, k.pin)
	if err != nil || ed != nil {
		return ed, err
	}
	var id, label []byte
	if k.c.KeyID != "" {
		id, _ = decodeHexID(k.c.KeyID) // Validate checked it
	}
	if k.c.KeyLabel != "" {
		label = []byte(k.c.KeyLabel)
	}
	keys, err := ctx.FindKeyPairs(id, label)
	switch {
	case err != nil:
		return nil, err
	case len(keys) == 0:
		return nil, fmt.Errorf("no key pair with label %q and id %q (a private key needs a CKA_ID and its public key in the token)", k.c.KeyLabel, k.c.KeyID)
	case len(keys) > 1:
		return nil, fmt.Errorf("%d key pairs have label %q and id %q; set both to pick one", len(keys), k.c.KeyLabel, k.c.KeyID)
	}
	return keys[0], nil
}

// Public implements crypto.Signer.
func (k *pkcs11Key) Public() crypto.PublicKey { return k.pub }

// Sign implements crypto.Signer: once with the key in hand, and once
// more after finding it again when that fails.
func (k *pkcs11Key) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	k.mu.Lock()
	key := k.key
	k.mu.Unlock()
	if key != nil {
		sig, err := key.Sign(rand, digest, opts)
		if err == nil || errors.Is(err, errSignerOpts) {
			return sig, err
		}
		if rerr := k.reopen(key); rerr != nil {
			return nil, fmt.Errorf("%w; finding the key again: %w", err, rerr)
		}
	} else if err := k.reopen(nil); err != nil {
		return nil, err
	}
	k.mu.Lock()
	key = k.key
	k.mu.Unlock()
	return key.Sign(rand, digest, opts)
}

// reopen finds the key again after failed failed to sign, unless another
// caller did so meanwhile.
func (k *pkcs11Key) reopen(failed crypto.Signer) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return fmt.Errorf("the PKCS#11 signer is closed")
	}
	if k.key != nil && k.key != failed {
		return nil
	}
	if k.ctx != nil {
		key, err := k.find(k.ctx)
		if err == nil && samePublic(k.pub, key.Public()) {
			release(k.key)
			k.key = key
			return nil
		}
		if err == nil {
			release(key)
		}
		release(k.key)
		k.ctx.Close()
		k.ctx, k.key = nil, nil
	}
	return k.open()
}

// Close implements io.Closer.
func (k *pkcs11Key) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if k.ctx == nil {
		return nil
	}
	release(k.key)
	err := k.ctx.Close()
	k.ctx, k.key = nil, nil
	return err
}

// release gives back what a key found in a context holds of its own (an
// Ed25519 key's session) before the context closes or the key is
// replaced; a crypto11 key holds nothing beyond its context.
func release(key crypto.Signer) {
	if ed, ok := key.(*pkcs11Ed25519); ok {
		ed.release()
	}
}

func samePublic(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
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
