// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"testing"
	"time"
)

func TestGroupDenials(t *testing.T) {
	t0 := testNow
	var ds []Denial
	// Newest first: 17 identical refusals of account 7, one of account 8
	// in between, and one "never" of account 7 that stays apart.
	for i := range 17 {
		ds = append(ds, Denial{At: t0.Add(-time.Duration(i) * time.Second), Action: "new-order", Limit: "order-creation", Key: "7", RetryAfter: time.Duration(i) * time.Second, Denied: 1})
		if i == 3 {
			ds = append(ds, Denial{At: t0.Add(-3500 * time.Millisecond), Action: "new-order", Limit: "order-creation", Key: "8", Denied: 1})
		}
	}
	ds = append(ds, Denial{At: t0.Add(-time.Minute), Action: "new-order", Limit: "order-creation", Key: "7", Never: true, Denied: 1})
	g := groupDenials(ds)
	if len(g) != 3 {
		t.Fatalf("%d groups, want 3: %+v", len(g), g)
	}
	if g[0].Key != "7" || g[0].Count != 17 || !g[0].Last.Equal(t0) || !g[0].First.Equal(t0.Add(-16*time.Second)) || g[0].RetryAfter != 0 {
		t.Errorf("first group %+v, want 17 of account 7 from -16s to now, the newest's retry-after", g[0])
	}
	if g[1].Key != "8" || g[1].Count != 1 || !g[1].First.Equal(g[1].Last) {
		t.Errorf("second group %+v, want the single refusal of account 8", g[1])
	}
	if !g[2].Never || g[2].Count != 1 {
		t.Errorf("third group %+v, want the never refusal apart", g[2])
	}
	if len(groupDenials(nil)) != 0 {
		t.Error("no denials make groups")
	}
}
