// SPDX-License-Identifier: Apache-2.0

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
	err := scanAuthzs(rows, func(x *acme.Authorization) bool {
		if a == nil {
			a = x
		}
		return a == x
	})
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, sql.ErrNoRows
	}
	return a, nil
}

// ScanAuthzsRows reads the rows of AuthzChallengeCols of several
// authorizations, ordered by authorization, then challenge position, and
// returns them in that order (none: an empty slice). It does not close
// rows.
func ScanAuthzsRows(rows Rows) ([]*acme.Authorization, error) {
	var out []*acme.Authorization
	err := scanAuthzs(rows, func(x *acme.Authorization) bool {
		if n := len(out); n == 0 || out[n-1].ID != x.ID {
			out = append(out, x)
		}
		return true
	})
	return out, err
}

// scanAuthzs reads rows of AuthzChallengeCols. For each it calls keep with
// the authorization the row belongs to (the previous row's when the ID is
// the same, else a new one), and adds the row's challenge to it while keep
// returns true.
func scanAuthzs(rows Rows, keep func(*acme.Authorization) bool) error {
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
			return err
		}
		if a == nil || a.ID != r.x.ID {
			x := r.x
			x.AccountID = FormatAccountID(r.accountID)
			a = &x
		}
		if !keep(a) || r.cID == nil {
			continue // not kept, or no challenge: the LEFT JOIN's one row
		}
		c := &acme.Challenge{
			ID: acme.ChallengeID(*r.cID), AuthzID: acme.AuthzID(deref(r.cAuthzID)), Type: acme.ChallengeType(deref(r.cType)),
			Token: deref(r.cToken), Status: acme.Status(deref(r.cStatus)),
			Validated: r.cValidated, UpdatedAt: r.cUpdate,
		}
		var err error
		if c.Error, err = challengeError(c.ID, r.cProblem); err != nil {
			return err
		}
		a.Challenges = append(a.Challenges, c)
	}
	return rows.Err()
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
func challengeError(id acme.ChallengeID, problem *string) (*acme.Problem, error) {
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

// ChallengeInsertCols are the columns of a new challenge's row, whose
// values AuthzRow.ChallengeValues returns in order.
const ChallengeInsertCols = "id, authz_id, position, type, token, status, validated, error, updated_at"

// AuthzRow is a new authorization with its challenges, checked and
// encoded for their rows. Its row's columns are AuthzCols.
type AuthzRow struct {
	What      string // names the write in errors
	Authz     *acme.Authorization
	AccountID int64
	Errors    []*string // the encoded Error of each challenge, nil for none
}

// NewAuthzRow checks a and its challenges and encodes their rows, so
// that the transaction that inserts them only runs statements.
func NewAuthzRow(d Driver, a *acme.Authorization) (*AuthzRow, error) {
	r := &AuthzRow{What: fmt.Sprintf("create authorization %q", a.ID), Authz: a, Errors: make([]*string, len(a.Challenges))}
	if a.ID == "" {
		return nil, d.Errorf("%s: empty id", r.What)
	}
	var err error
	if r.AccountID, err = d.AccountOf(r.What, a.AccountID); err != nil {
		return nil, err
	}
	if err := d.CheckTimes(r.What, a.Expires, a.CreatedAt); err != nil {
		return nil, err
	}
	for i, c := range a.Challenges {
		// The name of the write is made only for an error: an
		// authorization has several challenges, and most are fine.
		if c.ID == "" {
			return nil, d.Errorf("%s: empty id", r.ChallengeWhat(i))
		}
		if !TimesInRange(c.Validated, c.UpdatedAt) {
			return nil, d.CheckTimes(r.ChallengeWhat(i), c.Validated, c.UpdatedAt)
		}
		if c.Error != nil {
			if r.Errors[i], err = NullableJSON(r.ChallengeWhat(i)+": error", c.Error); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// ChallengeWhat names the insertion of the i-th challenge in errors.
func (r *AuthzRow) ChallengeWhat(i int) string {
	return fmt.Sprintf("create challenge %q of authorization %q", r.Authz.Challenges[i].ID, r.Authz.ID)
}

// Values are the values of AuthzCols.
func (r *AuthzRow) Values() []any {
	a := r.Authz
	return []any{string(a.ID), r.AccountID, string(a.Identifier.Type), a.Identifier.Value, a.Wildcard,
		string(a.Status), ToNanos(a.Expires), ToNanos(a.CreatedAt)}
}

// ChallengeValues are the values of ChallengeInsertCols for the i-th
// challenge, whose position is i (its AuthzID is ignored).
func (r *AuthzRow) ChallengeValues(i int) []any {
	c := r.Authz.Challenges[i]
	return []any{string(c.ID), string(r.Authz.ID), i, string(c.Type), c.Token, string(c.Status), ToNanos(c.Validated),
		r.Errors[i], ToNanos(c.UpdatedAt)}
}

// ChallengeUpdate is what a write of a challenge's outcome (UpdateAuthz)
// stores in its row.
type ChallengeUpdate struct {
	What      string // names the write in errors
	ID        acme.ChallengeID
	Status    string
	Error     *string // JSON; nil for none
	Validated int64
	UpdatedAt int64
}

// NewChallengeUpdate checks and encodes the outcome of c for the write
// what.
func NewChallengeUpdate(d Driver, what string, c *acme.Challenge) (ChallengeUpdate, error) {
	u := ChallengeUpdate{What: what, ID: c.ID, Status: string(c.Status), Validated: ToNanos(c.Validated), UpdatedAt: ToNanos(c.UpdatedAt)}
	if err := d.CheckTimes(what, c.Validated, c.UpdatedAt); err != nil {
		return u, err
	}
	var err error
	u.Error, err = NullableJSON(what+": error", c.Error)
	return u, err
}

// InOrder returns got, the authorizations read for ids in any order, in
// the order of ids; the error wraps acme.ErrNotFound if one of ids was
// not read.
func InOrder(d Driver, ids []acme.AuthzID, got []*acme.Authorization) ([]*acme.Authorization, error) {
	byID := make(map[acme.AuthzID]*acme.Authorization, len(got))
	for _, a := range got {
		byID[a.ID] = a
	}
	out := make([]*acme.Authorization, len(ids))
	for i, id := range ids {
		if out[i] = byID[id]; out[i] == nil {
			return nil, d.NotFound(fmt.Sprintf("authorization %q", id))
		}
	}
	return out, nil
}
