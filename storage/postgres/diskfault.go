// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"fmt"

	"github.com/weir-pki/weir/acme"
)

// SQLSTATE codes of a server that cannot write now: its disk is full, it
// is a read-only standby (or default_transaction_read_only), or its
// storage failed.
const (
	codeDiskFull       = "53100"
	codeReadOnlySQLTx  = "25006"
	codeIOError        = "58030"
	codeInsufficientRs = "53000"
)

// unavailable wraps err in acme.ErrUnavailable when the server says it
// cannot write now (a 503 with Retry-After for the client, not a 500);
// any other error comes back as it is.
func unavailable(err error) error {
	switch pgCode(err) {
	case codeDiskFull, codeReadOnlySQLTx, codeIOError, codeInsufficientRs:
		return fmt.Errorf("%w: %w", acme.ErrUnavailable, err)
	}
	return err
}
