// SPDX-License-Identifier: Apache-2.0

package admin

// Tenants without required EAB. A tenant's policy binds the accounts made
// with its EAB keys; an account made without a key is in the default
// tenant, under ca.policy alone. While new accounts need no key, anyone
// may make such an account and get a tenant's names, those of its
// delegated zones too, by answering an ordinary challenge: a tenant
// narrows what its own accounts get, it does not keep its names to them.

// TenantsEABWarning is the warning check-config, the start log and the
// tenant pages give while tenants exist (tenants is their number) and eabRequired
// (acme.external-account-binding.required) is false; "" otherwise.
func TenantsEABWarning(tenants int, eabRequired bool) string {
	if tenants == 0 || eabRequired {
		return ""
	}
	return "tenants exist but acme.external-account-binding.required is false: an account made without an EAB key " +
		"is in the default tenant (ca.policy alone), so it can still get a tenant's names, delegated zones included, by answering an ordinary challenge. " +
		"To keep each tenant's names to its accounts, set acme.external-account-binding.required: true (a restart applies it), " +
		"give every EAB key a tenant (weir eab create --tenant NAME), and deactivate the accounts made without a key (weir accounts deactivate ID)"
}

// tenantsEABWarning is TenantsEABWarning of n tenants under the running
// configuration.
func (s *Server) tenantsEABWarning(n int) string {
	return TenantsEABWarning(n, s.cfg.Service.Config().EAB.Required)
}
