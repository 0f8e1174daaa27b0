// SPDX-License-Identifier: Apache-2.0

package system

import (
	"testing"

	"github.com/weir-pki/weir/web/admin"
)

func bucketOf(t *testing.T, bs []admin.BucketView, key string) admin.BucketView {
	t.Helper()
	for _, b := range bs {
		if b.Bucket == key {
			return b
		}
	}
	t.Fatalf("no bucket %s in %+v", key, bs)
	return admin.BucketView{}
}
