// SPDX-License-Identifier: Apache-2.0

package server

import (
	"testing"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
)

// badCase is one refused request.
type badCase struct {
	name   string
	send   func(t *testing.T) acmeenv.Response
	status int
	typ    acme.ProblemType
	detail string
	// check, when set, inspects the decoded problem further.
	check func(t *testing.T, p *acme.Problem)
}
