// SPDX-License-Identifier: Apache-2.0

package web

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestReadBody: the body comes back whole whatever length was announced
// (none, the right one, too small, too large), and the limit still holds.
func TestReadBody(t *testing.T) {
	body := strings.Repeat("x", 3000)
	for _, tc := range []struct {
		name          string
		contentLength int64
		limit         int64
		wantErr       bool
	}{
		{"unknown length", -1, 4096, false},
		{"exact length", 3000, 4096, false},
		{"announced too short", 10, 4096, false},
		{"announced too long", 3500, 4096, false},
		{"over the limit, announced", 3000, 2000, true},
		{"over the limit, unknown length", -1, 2000, true},
		{"over the limit, announced under it", 1000, 2000, true},
	} {
		r := http.MaxBytesReader(nil, io.NopCloser(strings.NewReader(body)), tc.limit)
		got, err := readBody(r, tc.contentLength, tc.limit)
		var mbe *http.MaxBytesError
		switch {
		case tc.wantErr && !errors.As(err, &mbe):
			t.Errorf("%s: error %v; want a MaxBytesError", tc.name, err)
		case !tc.wantErr && (err != nil || !bytes.Equal(got, []byte(body))):
			t.Errorf("%s: got %d bytes, %v; want the %d-byte body", tc.name, len(got), err, len(body))
		}
	}
}
