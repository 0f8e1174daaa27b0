// SPDX-License-Identifier: Apache-2.0

package acmeenv

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Response is a response to a hand-made request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Problem decodes a problem document body.
func (r Response) Problem() (typ string, detail string) {
	var p struct{ Type, Detail string }
	_ = json.Unmarshal(r.Body, &p)
	return p.Type, p.Detail
}

// LinkRel is the URL of the Link header field of h with relation rel, or
// "".
func LinkRel(h http.Header, rel string) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if strings.HasSuffix(part, `rel="`+rel+`"`) {
				return strings.Trim(part[:strings.Index(part, ">")+1], "<>")
			}
		}
	}
	return ""
}

// readResponse reads res into a Response and closes its body.
func readResponse(res *http.Response) Response {
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Nonce fetches a fresh nonce.
func (e *Env) Nonce() string {
	e.t.Helper()
	res, err := e.HTTP.Head(e.Base + "/acme/new-nonce")
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return res.Header.Get("Replay-Nonce")
}

// SignOpts shape a hand-made JWS.
type SignOpts struct {
	KID   string // "" means embed the JWK
	Nonce string // "" means fetch a fresh one
	URL   string // "" means the request URL
	Alg   jose.SignatureAlgorithm
}

// Sign makes a flattened JWS over payload.
func (e *Env) Sign(key crypto.Signer, url string, payload []byte, o SignOpts) []byte {
	e.t.Helper()
	if o.Nonce == "" {
		o.Nonce = e.Nonce()
	}
	if o.URL == "" {
		o.URL = url
	}
	if o.Alg == "" {
		o.Alg = AlgFor(key)
	}
	opts := &jose.SignerOptions{ExtraHeaders: map[jose.HeaderKey]any{"nonce": o.Nonce, "url": o.URL}}
	sk := jose.SigningKey{Algorithm: o.Alg, Key: key}
	if o.KID != "" {
		sk.Key = jose.JSONWebKey{Key: key, KeyID: o.KID}
	} else {
		opts.EmbedJWK = true
	}
	signer, err := jose.NewSigner(sk, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	return []byte(jws.FullSerialize())
}

// AlgFor is the JWS algorithm of key: RS256, EdDSA, ES384 for P-384,
// else ES256.
func AlgFor(key crypto.Signer) jose.SignatureAlgorithm {
	switch k := key.Public().(type) {
	case *rsa.PublicKey:
		return jose.RS256
	case ed25519.PublicKey:
		return jose.EdDSA
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize == 384 {
			return jose.ES384
		}
	}
	return jose.ES256
}

// Post sends a body to url with the given content type.
func (e *Env) Post(url, contentType string, body []byte) Response {
	e.t.Helper()
	res, err := e.HTTP.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	return readResponse(res)
}

// Get sends a GET to url, failing t on an error.
func (e *Env) Get(t *testing.T, url string) Response {
	t.Helper()
	res, err := e.HTTP.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// PostJWS signs payload and posts it.
func (e *Env) PostJWS(key crypto.Signer, url string, payload []byte, o SignOpts) Response {
	e.t.Helper()
	return e.Post(url, "application/jose+json", e.Sign(key, url, payload, o))
}

// PostJWSAccept is PostJWS with an Accept header.
func (e *Env) PostJWSAccept(key crypto.Signer, url string, payload []byte, o SignOpts, accept string) Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodPost, url, bytes.NewReader(e.Sign(key, url, payload, o)))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/jose+json")
	req.Header.Set("Accept", accept)
	res, err := e.HTTP.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return readResponse(res)
}
