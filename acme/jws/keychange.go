// SPDX-License-Identifier: Apache-2.0

package jws

import (
	"bytes"
	"encoding/json"

	"github.com/weir-pki/weir/acme"
)

// NewKey is the verified new key of an account key rollover.
type NewKey struct {
	KeyJSON    []byte
	Thumbprint acme.Thumbprint
}

// keyChangePayload is the payload of the inner JWS (RFC 8555 §7.3.5).
type keyChangePayload struct {
	Account string          `json:"account"`
	OldKey  json.RawMessage `json:"oldKey"`
}

// VerifyKeyChange checks the inner JWS of a key-change request whose outer
// JWS (already verified, signed by the account's current key) had payload
// outer and URL url (RFC 8555 §7.3.5): it is a flattened JWS signed by the
// new key given in its "jwk", with the same "url", no "nonce", naming the
// account and its current key.
func (v *Verifier) VerifyKeyChange(outer *Request, url string) (*NewKey, error) {
	if outer.Account == nil {
		return nil, acme.Malformed("key-change must be signed with the account's kid")
	}
	p, prob := parse(outer.Payload)
	if prob != nil {
		prob.Detail = "inner JWS: " + prob.Detail
		return nil, prob
	}
	h := p.header
	switch {
	case len(h.JWK) == 0 || h.KID != "":
		return nil, acme.Malformed("inner JWS: the protected header must have \"jwk\" with the new key and no \"kid\"")
	case h.URL == nil || *h.URL != url:
		return nil, acme.Malformed("inner JWS: \"url\" must equal the outer JWS's %q", url)
	case h.Nonce != nil:
		return nil, acme.Malformed("inner JWS: the protected header must not have a \"nonce\"")
	}
	key, prob := parseKey(h.JWK, p.alg)
	if prob != nil {
		return nil, prob
	}
	payload, prob := verifySig(p, key)
	if prob != nil {
		prob.Detail = "inner JWS: " + prob.Detail
		return nil, prob
	}
	var kc keyChangePayload
	if err := Unmarshal(payload, &kc); err != nil {
		return nil, unmarshalProblem(err, "inner JWS: the payload", "a key-change object")
	}
	if kc.Account != v.accountURL+string(outer.Account.ID) {
		return nil, acme.Unauthorized("inner JWS: \"account\" %q is not the URL of the signing account", kc.Account)
	}
	old, prob := parseAnyKey(kc.OldKey)
	if prob != nil {
		return nil, acme.Malformed("inner JWS: \"oldKey\": %s", prob.Detail)
	}
	_, oldTP, err := keyInfo(old)
	if err != nil || oldTP != outer.Account.KeyThumbprint {
		return nil, acme.Unauthorized("inner JWS: \"oldKey\" is not the account's current key")
	}
	js, tp, err := keyInfo(key)
	if err != nil {
		return nil, acme.Internal(err)
	}
	if bytes.Equal(js, outer.Account.Key) || tp == outer.Account.KeyThumbprint {
		return nil, acme.Malformed("inner JWS: the new key is the account's current key")
	}
	return &NewKey{KeyJSON: js, Thumbprint: tp}, nil
}
