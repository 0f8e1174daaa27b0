package sqlrow

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// AuthzCols are the columns of an authorization, in the order
// AuthzChallengeCols and ScanAuthzRows expect them.
const AuthzCols = "id, account_id, ident_type, ident_value, wildcard, status, expires, created_at"

// AuthzChallengeCols are the columns ScanAuthzRows reads, in order: those
// of AuthzCols (table alias a), then those of ChallengeCols (alias c),
// NULL when the authorization has no challenge (a LEFT JOIN).
const AuthzChallengeCols = `a.id, a.account_id, a.ident_type, a.ident_value, a.wildcard, a.status, a.expires, a.created_at,
	c.id, c.authz_id, c.type, c.token, c.status, c.validated, c.error, c.updated_at`

// ChallengeCols are the columns of challenges that ScanChallenge reads,
// in order.
const ChallengeCols = "id, authz_id, type, token, status, validated, error, updated_at"

// ScanAuthzRows reads the rows of AuthzChallengeCols of one
// authorization, ordered by challenge position, and returns it, or
// sql.ErrNoRows if there are none. It does not close rows.
func ScanAuthzRows(rows Rows) (*acme.Authorization, error) {
	var a *acme.Authorization
	for rows.Next() {
		// The row's columns in one variable, which escapes to the heap
		// once; the objects kept are copied out of it.
		var r struct {
			x                   acme.Authorization
			accountID           int64
			cID, cAuthzID       *string
			cType, cToken       *string
			cStatus, cProblem   *string
			cValidated, cUpdate time.Time
		}
		if err := rows.Scan(&r.x.ID, &r.accountID, &r.x.Identifier.Type, &r.x.Identifier.Value, &r.x.Wildcard,
			&r.x.Status, nanos(&r.x.Expires), nanos(&r.x.CreatedAt),
			&r.cID, &r.cAuthzID, &r.cType, &r.cToken, &r.cStatus, nanos(&r.cValidated), &r.cProblem, nanos(&r.cUpdate)); err != nil {
			return nil, err
		}
		if a == nil {
			x := r.x
			x.AccountID = FormatAccountID(r.accountID)
			a = &x
		}
		if r.cID == nil {
			continue // no challenge: the LEFT JOIN's one row
		}
		c := &acme.Challenge{
			ID: *r.cID, AuthzID: deref(r.cAuthzID), Type: acme.ChallengeType(deref(r.cType)),
			Token: deref(r.cToken), Status: acme.Status(deref(r.cStatus)),
			Validated: r.cValidated, UpdatedAt: r.cUpdate,
		}
		var err error
		if c.Error, err = challengeError(c.ID, r.cProblem); err != nil {
			return nil, err
		}
		a.Challenges = append(a.Challenges, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, sql.ErrNoRows
	}
	return a, nil
}

// ScanChallenge reads one row of ChallengeCols.
func ScanChallenge(row Scanner) (*acme.Challenge, error) {
	var (
		c       acme.Challenge
		problem *string
	)
	if err := row.Scan(&c.ID, &c.AuthzID, &c.Type, &c.Token, &c.Status, nanos(&c.Validated), &problem, nanos(&c.UpdatedAt)); err != nil {
		return nil, err
	}
	var err error
	if c.Error, err = challengeError(c.ID, problem); err != nil {
		return nil, err
	}
	return &c, nil
}

// challengeError decodes the error column of challenge id: NULL is none.
func challengeError(id string, problem *string) (*acme.Problem, error) {
	if problem == nil {
		return nil, nil
	}
	return FromNullableJSON[acme.Problem](fmt.Sprintf("challenge %q error", id), problem)
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
