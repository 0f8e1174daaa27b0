// SPDX-License-Identifier: Apache-2.0

// Package jws authenticates ACME requests (RFC 8555 §6.2–§6.5): flattened
// JWS only, an algorithm allow-list, exactly one of "jwk" and "kid", the
// "url" header equal to the request URL, single-use nonces, and the inner
// JWS of an account key rollover (§7.3.5). Keys are go-jose JWKs;
// signatures are checked over the signing input as received (RFC 7515
// §5.2) with the standard library's ECDSA, RSA and Ed25519, as go-jose
// checks them (verify.go).
package jws

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/weir-pki/weir/acme"
)

// Algorithms are the JWS algorithms weir accepts (RFC 8555 §6.2 requires
// ES256 and recommends EdDSA).
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.EdDSA}

// Algorithms returns the accepted "alg" values, for badSignatureAlgorithm
// problems.
func Algorithms() []string {
	out := make([]string, len(algorithms))
	for i, a := range algorithms {
		out[i] = string(a)
	}
	return out
}

// MinRSABits is the smallest RSA account key accepted.
const MinRSABits = 2048

// maxRSABits bounds the cost of verifying with a hostile key.
const maxRSABits = 8192

// Request is an authenticated ACME POST.
type Request struct {
	// Payload is the verified payload; empty for POST-as-GET (§6.3).
	Payload []byte
	// Account is set for kid-signed requests.
	Account *acme.Account
	// Key is the key the request was signed with.
	Key crypto.PublicKey
	// KeyJSON is the signing key as a canonical public JWK.
	KeyJSON []byte
	// Thumbprint is the thumbprint of Key.
	Thumbprint acme.Thumbprint
}

// PostAsGet reports whether the request is a POST-as-GET (§6.3): an empty
// payload, not "{}".
func (r *Request) PostAsGet() bool { return len(r.Payload) == 0 }

// Verifier checks requests against the nonce store and the accounts.
type Verifier struct {
	// keys caches parsed account keys by thumbprint: parsing a JWK (big
	// integers, a curve check) on every kid-signed request is wasted work.
	keys     sync.Map
	keyCount atomic.Int64
	nonces   acme.NonceStore
	// account looks up an account by ID (ErrNotFound when unknown); it may
	// be cached. fresh, when set, reads past the cache.
	account func(ctx context.Context, id acme.AccountID) (*acme.Account, error)
	fresh   func(ctx context.Context, id acme.AccountID) (*acme.Account, error)
	// accountURL is the account URL prefix; kid = accountURL + ID.
	accountURL string
}

// NewVerifier makes a Verifier. accountURL is the URL prefix of account
// resources, e.g. "https://ca.example/acme/account/".
func NewVerifier(nonces acme.NonceStore, account func(ctx context.Context, id acme.AccountID) (*acme.Account, error), accountURL string) *Verifier {
	return &Verifier{nonces: nonces, account: account, accountURL: accountURL}
}

// SetAccountRefresh installs the lookup that reads an account from the
// store past any cache (acme.Service.AccountFresh). Verify uses it once
// before refusing a kid-signed request for its key or signature, so that
// a key change made on another replica is honoured at once. Call it
// before serving.
func (v *Verifier) SetAccountRefresh(fresh func(ctx context.Context, id acme.AccountID) (*acme.Account, error)) {
	v.fresh = fresh
}

// NonceRetryAfter is the Retry-After of the badNonce sent when the nonce
// store cannot be reached to redeem a nonce.
const NonceRetryAfter = time.Second

// maxCachedKeys bounds the key cache; past it the cache starts over.
const maxCachedKeys = 100_000

// accountKey returns the parsed key of acct, checked against alg.
func (v *Verifier) accountKey(acct *acme.Account, alg jose.SignatureAlgorithm) (*jose.JSONWebKey, *acme.Problem) {
	if k, ok := v.keys.Load(acct.KeyThumbprint); ok {
		key := k.(*jose.JSONWebKey)
		if prob := checkAlg(key, alg); prob != nil {
			return nil, prob
		}
		return key, nil
	}
	key, prob := parseKey(acct.Key, alg)
	if prob != nil {
		return nil, prob
	}
	if v.keyCount.Add(1) > maxCachedKeys {
		v.keys.Clear()
		v.keyCount.Store(1)
	}
	v.keys.Store(acct.KeyThumbprint, key)
	return key, nil
}

// flattened is the flattened JSON serialization (RFC 7515 §7.2.2).
type flattened struct {
	Protected  string          `json:"protected"`
	Payload    *string         `json:"payload"`
	Signature  string          `json:"signature"`
	Header     json.RawMessage `json:"header"`
	Signatures json.RawMessage `json:"signatures"`
}

// protectedHeader is what weir reads from the protected header.
type protectedHeader struct {
	Alg   string          `json:"alg"`
	Nonce *string         `json:"nonce"`
	URL   *string         `json:"url"`
	KID   string          `json:"kid"`
	JWK   json.RawMessage `json:"jwk"`
	// Crit and B64 are only looked for, to be refused.
	Crit json.RawMessage `json:"crit"`
	B64  json.RawMessage `json:"b64"`
}

// parsed is a syntactically checked JWS, not yet verified.
type parsed struct {
	// signingInput is "protected" and "payload" as received, joined by a
	// dot: what the signature signs (RFC 7515 §5.2). Both are canonical
	// base64url (decodeB64), so it is also what go-jose would rebuild
	// from the decoded parts.
	signingInput string
	payload      []byte
	sig          []byte
	header       protectedHeader
	alg          jose.SignatureAlgorithm
}

// decodeB64 decodes one part of a JWS: unpadded base64url (RFC 7515 §2),
// in its one canonical spelling. Go's decoder skips CR and LF and, unless
// strict, ignores set bits past the data; a part spelled another way
// decodes to the same bytes but is not the text that was signed.
func decodeB64(part, s string) ([]byte, *acme.Problem) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, acme.Malformed("the JWS %s is not base64url: line breaks", part)
	}
	b, err := strictB64.DecodeString(s)
	if err != nil {
		return nil, acme.Malformed("the JWS %s is not base64url: %v", part, err)
	}
	return b, nil
}

var strictB64 = base64.RawURLEncoding.Strict()

// parse checks the serialization and the algorithm (RFC 8555 §6.2).
func parse(body []byte) (*parsed, *acme.Problem) {
	var f flattened
	if err := Unmarshal(body, &f); err != nil {
		if _, ok := errors.AsType[*MemberError](err); ok {
			return nil, unmarshalProblem(err, "the JWS", "a JSON object")
		}
		return nil, bodyProblem(body)
	}
	switch {
	case f.Signatures != nil:
		return nil, acme.Malformed("the JWS must use the flattened JSON serialization, not the general one (RFC 8555 §6.2)")
	case f.Header != nil:
		return nil, acme.Malformed("the JWS must not have an unprotected header (RFC 8555 §6.2)")
	case f.Protected == "":
		return nil, acme.Malformed("the JWS needs \"protected\", \"payload\" and \"signature\" members")
	}
	hdr, prob := decodeB64("protected header", f.Protected)
	if prob != nil {
		return nil, prob
	}
	p := &parsed{}
	if err := Unmarshal(hdr, &p.header); err != nil {
		return nil, unmarshalProblem(err, "the JWS protected header", "a JSON object")
	}
	p.alg = jose.SignatureAlgorithm(p.header.Alg)
	ok := false
	for _, a := range algorithms {
		ok = ok || a == p.alg
	}
	if !ok {
		prob := acme.NewProblem(acme.ProbBadSignatureAlgorithm, "JWS algorithm %q is not accepted; use one of %s", p.header.Alg, strings.Join(Algorithms(), ", "))
		prob.Algorithms = Algorithms()
		return nil, prob
	}
	// Checked after the algorithm, so that "none" with its empty signature
	// is reported as the unacceptable algorithm it is.
	if f.Payload == nil || f.Signature == "" {
		return nil, acme.Malformed("the JWS needs \"protected\", \"payload\" and \"signature\" members")
	}
	// No extension is understood, so none may be critical (RFC 7515
	// §4.1.11); "b64" (RFC 7797) would change what is signed.
	if p.header.Crit != nil || p.header.B64 != nil {
		return nil, acme.Malformed("the JWS protected header must not have \"crit\" or \"b64\"")
	}
	if p.payload, prob = decodeB64("payload", *f.Payload); prob != nil {
		return nil, prob
	}
	if p.sig, prob = decodeB64("signature", f.Signature); prob != nil {
		return nil, prob
	}
	p.signingInput = f.Protected + "." + *f.Payload
	return p, nil
}

// bodyProblem says what is wrong with a request body that json.Unmarshal
// refused as a flattened JWS: not one JSON object, or data after it.
func bodyProblem(body []byte) *acme.Problem {
	var f flattened
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&f); err != nil {
		return acme.Malformed("the request body is not a JSON object: %v", err)
	}
	if dec.More() {
		return acme.Malformed("the request body has data after the JWS object")
	}
	// Decode accepts what Unmarshal refused: a valid object followed by
	// something that is not (a stray token).
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != nil {
		return acme.Malformed("the request body has data after the JWS object: %v", err)
	}
	return acme.Malformed("the request body is not a JSON object")
}

// parseAnyKey reads a public JWK of any accepted kind.
func parseAnyKey(raw json.RawMessage) (*jose.JSONWebKey, *acme.Problem) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || !k.IsPublic() {
		return nil, acme.NewProblem(acme.ProbBadPublicKey, "not a valid public JWK")
	}
	return &k, nil
}

// parseKey reads a public JWK and checks it suits alg.
func parseKey(raw json.RawMessage, alg jose.SignatureAlgorithm) (*jose.JSONWebKey, *acme.Problem) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil {
		return nil, acme.NewProblem(acme.ProbBadPublicKey, "the JWK cannot be parsed: %v", err)
	}
	if !k.Valid() || !k.IsPublic() {
		return nil, acme.NewProblem(acme.ProbBadPublicKey, "the JWK is not a valid public key")
	}
	if prob := checkAlg(&k, alg); prob != nil {
		return nil, prob
	}
	return &k, nil
}

// checkAlg checks that a key is acceptable and suits alg (RFC 8555 §6.2).
func checkAlg(k *jose.JSONWebKey, alg jose.SignatureAlgorithm) *acme.Problem {
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		if n := key.N.BitLen(); n < MinRSABits || n > maxRSABits {
			return acme.NewProblem(acme.ProbBadPublicKey, "RSA key of %d bits; between %d and %d required", n, MinRSABits, maxRSABits)
		}
		if alg != jose.RS256 {
			return algMismatch(alg, "RSA")
		}
	case *ecdsa.PublicKey:
		switch {
		case key.Curve == elliptic.P256() && alg == jose.ES256, key.Curve == elliptic.P384() && alg == jose.ES384:
		case key.Curve != elliptic.P256() && key.Curve != elliptic.P384():
			return acme.NewProblem(acme.ProbBadPublicKey, "ECDSA curve %s is not accepted; use P-256 or P-384", key.Curve.Params().Name)
		default:
			return algMismatch(alg, "ECDSA "+key.Curve.Params().Name)
		}
	case ed25519.PublicKey:
		if alg != jose.EdDSA {
			return algMismatch(alg, "Ed25519")
		}
	default:
		return acme.NewProblem(acme.ProbBadPublicKey, "JWK key type %T is not accepted", k.Key)
	}
	return nil
}

func algMismatch(alg jose.SignatureAlgorithm, kind string) *acme.Problem {
	return acme.Malformed("JWS algorithm %s does not fit the %s key in the request", alg, kind)
}

// verifySig checks the signature of p with key and returns the payload.
func verifySig(p *parsed, key *jose.JSONWebKey) ([]byte, *acme.Problem) {
	if !verifySignature(key.Key, p.alg, p.signingInput, p.sig) {
		return nil, acme.Malformed("the JWS signature does not verify with the key it names")
	}
	return p.payload, nil
}

// keyInfo returns the canonical JWK JSON and thumbprint of a public key.
func keyInfo(k *jose.JSONWebKey) ([]byte, acme.Thumbprint, error) {
	pub := k.Public()
	js, err := pub.MarshalJSON()
	if err != nil {
		return nil, "", err
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, "", err
	}
	return js, acme.Thumbprint(base64.RawURLEncoding.EncodeToString(tp)), nil
}

// Verify authenticates an ACME POST whose body is body and whose full
// request URL is url (RFC 8555 §6.2–§6.5).
func (v *Verifier) Verify(ctx context.Context, body []byte, url string) (*Request, error) {
	p, prob := parse(body)
	if prob != nil {
		return nil, prob
	}
	h := p.header
	if h.URL == nil {
		return nil, acme.Malformed("the JWS protected header has no \"url\" (RFC 8555 §6.4)")
	}
	if *h.URL != url {
		return nil, acme.Unauthorized("the JWS \"url\" %q does not match the request URL %q (RFC 8555 §6.4.1)", *h.URL, url)
	}
	if h.Nonce == nil {
		return nil, acme.NewProblem(acme.ProbBadNonce, "the JWS protected header has no \"nonce\" (RFC 8555 §6.5)")
	}
	if (h.KID == "") == (len(h.JWK) == 0) {
		return nil, acme.Malformed("the JWS protected header must have exactly one of \"jwk\" and \"kid\" (RFC 8555 §6.2)")
	}
	req := &Request{}
	var (
		key     *jose.JSONWebKey
		payload []byte
	)
	if h.KID != "" {
		kid, ok := strings.CutPrefix(h.KID, v.accountURL)
		if !ok || kid == "" || strings.Contains(kid, "/") {
			return nil, acme.NewProblem(acme.ProbAccountDoesNotExist, "the \"kid\" %q is not an account URL of this server", h.KID)
		}
		id := acme.AccountID(kid)
		var acct *acme.Account
		acct, key, payload, prob = v.verifyKID(ctx, p, id, v.account)
		if prob != nil && acct != nil && v.fresh != nil {
			// acct may be a cached copy from before a key change made on
			// another replica (accounts are cached for seconds): before
			// refusing the key, ask the store.
			if a2, k2, p2, prob2 := v.verifyKID(ctx, p, id, v.fresh); a2 != nil && a2.KeyThumbprint != acct.KeyThumbprint {
				acct, key, payload, prob = a2, k2, p2, prob2
			}
		}
		if prob != nil {
			return nil, prob
		}
		req.Account = acct
		return v.finish(ctx, req, h, key, payload)
	}
	key, prob = parseKey(h.JWK, p.alg)
	if prob != nil {
		return nil, prob
	}
	if payload, prob = verifySig(p, key); prob != nil {
		return nil, prob
	}
	return v.finish(ctx, req, h, key, payload)
}

// verifyKID looks up account id with lookup and verifies p with its key.
// The account comes back with a problem when the problem is about the key
// or the signature (which a newer copy of the account could settle), and
// nil with any other.
func (v *Verifier) verifyKID(ctx context.Context, p *parsed, id acme.AccountID, lookup func(context.Context, acme.AccountID) (*acme.Account, error)) (*acme.Account, *jose.JSONWebKey, []byte, *acme.Problem) {
	acct, err := lookup(ctx, id)
	if err != nil {
		if errors.Is(err, acme.ErrNotFound) {
			return nil, nil, nil, acme.NewProblem(acme.ProbAccountDoesNotExist, "account %s does not exist", id)
		}
		return nil, nil, nil, acme.Internal(err)
	}
	key, prob := v.accountKey(acct, p.alg)
	if prob != nil {
		return acct, nil, nil, prob
	}
	payload, prob := verifySig(p, key)
	if prob != nil {
		return acct, nil, nil, prob
	}
	// After the signature: only the holder of the key learns the
	// account's status. Deactivation and revocation are final, so no
	// newer copy could settle this.
	if acct.Status != acme.StatusValid {
		return nil, nil, nil, acme.AccountNotValid(id, acct.Status)
	}
	return acct, key, payload, nil
}

// finish redeems the nonce (RFC 8555 §6.5) of a request whose signature
// verified, so that a forged request cannot spend a client's nonce, and
// fills in req.
func (v *Verifier) finish(ctx context.Context, req *Request, h protectedHeader, key *jose.JSONWebKey, payload []byte) (*Request, error) {
	ok, err := v.nonces.Redeem(ctx, *h.Nonce)
	if err != nil {
		// The nonce store is unreachable. badNonce, not serverInternal:
		// every client retries badNonce with a fresh nonce (RFC 8555
		// §6.5), and Retry-After paces the retries while the store is
		// back (docs/ARCHITECTURE.md, "Nonces").
		bad := acme.NewProblem(acme.ProbBadNonce, "the nonce could not be checked (the nonce store is unavailable); retry with a fresh nonce")
		bad.RetryAfter = NonceRetryAfter
		bad.Cause = err
		return nil, bad
	}
	if !ok {
		return nil, acme.NewProblem(acme.ProbBadNonce, "the nonce %q is unknown, expired or already used", *h.Nonce)
	}
	req.Payload = payload
	req.Key = key.Key
	if req.Account != nil {
		req.KeyJSON, req.Thumbprint = req.Account.Key, req.Account.KeyThumbprint
	} else if req.KeyJSON, req.Thumbprint, err = keyInfo(key); err != nil {
		return nil, acme.Internal(err)
	}
	return req, nil
}
