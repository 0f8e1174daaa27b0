// SPDX-License-Identifier: Apache-2.0

package system

import (
	"errors"
	"net/http"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
)

// noRetry makes an x/crypto/acme client answer a 429 or 503 at once
// rather than wait its Retry-After (a week for duplicate-certificate).
func noRetry(int, *http.Request, *http.Response) time.Duration { return -1 }

// isRateLimited reports whether err is a 429 rateLimited ACME error.
func isRateLimited(err error) bool {
	var ae *xacme.Error
	return errors.As(err, &ae) && ae.StatusCode == http.StatusTooManyRequests && ae.ProblemType == string(acme.ProbRateLimited)
}
