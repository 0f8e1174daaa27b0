// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"sync"
	"time"
)

// Dashboard sessions are held in this process: the cookie carries a random
// session ID and nothing else, so a logout or a new admin token ends a
// session at once, and a stolen cookie dies with its session. With several
// replicas an administrator logs in to each one.

const (
	// sessionLifetime is how long a session lasts at most after its login.
	sessionLifetime = 12 * time.Hour
	// sessionIdle ends a session that made no request for this long.
	sessionIdle = time.Hour
	// maxSessions bounds the sessions held; a login beyond it ends the
	// oldest one.
	maxSessions = 1000
	// secretBytes is the entropy of a session ID and of a CSRF token.
	secretBytes = 32
)

// session is one dashboard login.
type session struct {
	// csrf is the token every state-changing form of the session carries.
	csrf string
	// who logged in, with the SHA-256 of the token typed: a named
	// credential's session lives only while that credential does.
	who               Principal
	digest            [sha256.Size]byte
	created, lastSeen time.Time
}

// sessionKey is the SHA-256 of a session ID: sessions are looked up by it,
// so the lookup's timing says nothing about the IDs held.
type sessionKey [sha256.Size]byte

// auth holds the admin token and the sessions logged in with it or with a
// named credential; one lock covers the token and the sessions, so a login
// that checked the old token cannot outlive a rotation.
type auth struct {
	now func() time.Time
	// none is admin.auth: none, fixed at start: setToken cannot turn
	// authentication on or off.
	none bool
	// creds are the named credentials (credentials.go); nil for none.
	creds *CredentialSet

	mu       sync.Mutex
	token    string
	sessions map[sessionKey]*session
}

func newAuth(token string, creds *CredentialSet, now func() time.Time) *auth {
	return &auth{token: token, none: token == "", creds: creds, now: now, sessions: map[sessionKey]*session{}}
}

// bearer returns the principal of tok: the token file's, or a named
// credential's.
func (a *auth) bearer(tok string) (Principal, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.principalLocked(tok)
}

func (a *auth) principalLocked(tok string) (Principal, bool) {
	if a.none || tok == "" {
		return Principal{}, false
	}
	if equalSecret(tok, a.token) {
		return root, true
	}
	return a.creds.lookup(sha256.Sum256([]byte(tok)))
}

// setToken replaces the admin token and ends every session.
func (a *auth) setToken(tok string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.none || tok == "" {
		return errors.New("admin: the token can be replaced, not turned on or off (admin.auth needs a restart)")
	}
	a.token = tok
	clear(a.sessions)
	return nil
}

// login starts a session when tok is the admin token or a named
// credential's and returns its ID, CSRF token and principal.
func (a *auth) login(tok string) (id, csrf string, who Principal, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	who, ok = a.principalLocked(tok)
	if !ok {
		return "", "", Principal{}, false
	}
	id, csrf = randomSecret(), randomSecret()
	now := a.now()
	a.evictLocked(now)
	a.sessions[sha256.Sum256([]byte(id))] = &session{csrf: csrf, who: who, digest: sha256.Sum256([]byte(tok)), created: now, lastSeen: now}
	return id, csrf, who, true
}

// evictLocked drops the ended sessions and, at the bound, the oldest.
func (a *auth) evictLocked(now time.Time) {
	var (
		oldest   sessionKey
		oldestAt time.Time
	)
	for k, s := range a.sessions {
		if s.ended(now) {
			delete(a.sessions, k)
			continue
		}
		if oldestAt.IsZero() || s.created.Before(oldestAt) {
			oldest, oldestAt = k, s.created
		}
	}
	if len(a.sessions) >= maxSessions {
		delete(a.sessions, oldest)
	}
}

// ended reports whether the session is past its lifetime or idle timeout.
func (s *session) ended(now time.Time) bool {
	return !now.Before(s.created.Add(sessionLifetime)) || !now.Before(s.lastSeen.Add(sessionIdle))
}

// use returns the CSRF token and principal of the live session id and
// marks it used now; ok is false for an unknown or ended session (which is
// dropped). A named credential's session ends when the credential is
// revoked or its role changes.
func (a *auth) use(id string) (csrf string, who Principal, ok bool) {
	if id == "" {
		return "", Principal{}, false
	}
	k := sessionKey(sha256.Sum256([]byte(id)))
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	s, found := a.sessions[k]
	if !found {
		return "", Principal{}, false
	}
	if s.ended(now) || (s.who != root && !a.credentialLives(s)) {
		delete(a.sessions, k)
		return "", Principal{}, false
	}
	s.lastSeen = now
	return s.csrf, s.who, true
}

// credentialLives reports whether the named credential s logged in with
// still exists with the same role.
func (a *auth) credentialLives(s *session) bool {
	p, ok := a.creds.lookup(s.digest)
	return ok && p == s.who
}

// end ends the session id.
func (a *auth) end(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, sha256.Sum256([]byte(id)))
}

// randomSecret is secretBytes from crypto/rand, base64url.
func randomSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // it never fails (crypto/rand, Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// equalSecret compares two secrets in constant time, their lengths
// included (it compares their digests).
func equalSecret(a, b string) bool {
	x, y := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// sessionCtxKey carries the request's session in its context.
type sessionCtxKey struct{}

// requestSession is what the handlers know of the request's session.
type requestSession struct {
	id, csrf string
	who      Principal
}

func withSession(ctx context.Context, s requestSession) context.Context {
	return context.WithValue(ctx, sessionCtxKey{}, s)
}

// sessionOf is the request's session; ok is false for a request
// authenticated otherwise (the bearer token, or admin.auth: none).
func sessionOf(ctx context.Context) (requestSession, bool) {
	s, ok := ctx.Value(sessionCtxKey{}).(requestSession)
	return s, ok
}
