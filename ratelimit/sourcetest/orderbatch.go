package sourcetest

import (
	"strconv"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// OrderBatches returns the new-order batch that every backend's benchmark
// spends, so their numbers compare: order i comes from account i mod
// accounts and asks order-creation, a 3-name san-budget, the
// duplicate-certificate check, three failed-validation checks, and three
// pending-authorization adds expiring an hour after now. The accounts' keys
// are computed once, here.
func OrderBatches(accounts int) func(i int, now time.Time) []ratelimit.Request {
	names := []string{"a.example.com", "b.example.com", "c.example.com"}
	type account struct {
		id, dup string
		failed  [3]string
	}
	accts := make([]account, accounts)
	for i := range accts {
		id := "acct-" + strconv.Itoa(i)
		accts[i] = account{id: id, dup: ratelimit.FQDNSetKey(id, names)}
		for j, n := range names {
			accts[i].failed[j] = ratelimit.FailedValidationKey(id, n)
		}
	}
	return func(i int, now time.Time) []ratelimit.Request {
		a := &accts[i%accounts]
		exp := now.Add(time.Hour)
		s := strconv.Itoa(i)
		return []ratelimit.Request{
			{Name: ratelimit.OrderCreation, Key: a.id},
			{Name: ratelimit.SANBudget, Key: a.id, Cost: 3},
			{Name: ratelimit.DuplicateCertificate, Key: a.dup, CheckOnly: true},
			{Name: ratelimit.FailedValidation, Key: a.failed[0], CheckOnly: true},
			{Name: ratelimit.FailedValidation, Key: a.failed[1], CheckOnly: true},
			{Name: ratelimit.FailedValidation, Key: a.failed[2], CheckOnly: true},
			{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-0", MemberTime: exp},
			{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-1", MemberTime: exp},
			{Name: ratelimit.PendingAuthorizations, Key: a.id, Member: "authz-" + s + "-2", MemberTime: exp},
		}
	}
}
