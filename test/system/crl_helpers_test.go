// SPDX-License-Identifier: Apache-2.0

package system

import (
	"net/url"
)

// onBase moves a URL of an earlier server of the same data directory to
// e: the test servers listen on new ports, where a real move keeps
// server.external-url.
func (e *env) onBase(old string) string {
	u, err := url.Parse(old)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.Base + u.Path
}
