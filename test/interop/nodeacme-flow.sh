# SPDX-License-Identifier: Apache-2.0

# acme-client, the Node.js ACME client (test/interop/nodeacme, at the
# version its package-lock.json pins, installed with npm ci from the npm
# registry), sourced by run.sh. flow.js (see its header) issues with
# client.auto() by http-01 and by dns-01 (a wildcard), revokes with the
# account key (reason 4), rolls the account key over, issues step by step
# with the new key and deactivates the account; the shell checks each
# chain and the CRL with openssl.
# It uses run.sh's variables and helpers (TMP, LOGS, ROOT, DIRECTORY,
# HPORT, TXT_DIR, pass, fail, client, split_chain, check_leaf,
# check_revoked).

NA_LOG=$LOGS/acme-client.log

# nodeacme_missing prints node and npm when they are not installed.
nodeacme_missing() { missing_of node npm; }

nodeacme_flow() {
	local dir=$TMP/nodeacme out=$TMP/nodeacme-out
	mkdir -p "$dir" "$out"
	cp test/interop/nodeacme/package.json test/interop/nodeacme/package-lock.json test/interop/nodeacme/flow.js "$dir/"
	client "acme-client: npm ci ($(node --version), npm $(npm --version 2>/dev/null))" "$NA_LOG" \
		npm ci --prefix "$dir" --no-audit --no-fund || return 1
	client "acme-client $(node -p 'require(process.argv[1]).version' "$dir/node_modules/acme-client/package.json"): auto() by http-01 and dns-01, revoke, key rollover, deactivate" "$NA_LOG" \
		env NODE_EXTRA_CA_CERTS="$ROOT" node "$dir/flow.js" "$DIRECTORY" "127.0.0.1:$HPORT" "$TXT_DIR" "$out" || return 1
	local f rc=0
	for f in http01 dns01 rollover; do
		split_chain "$out/$f.pem" "$out/$f" >/dev/null
	done
	check_leaf "acme-client http-01" "$out/http01.leaf.pem" "$out/http01.rest.pem" na1.weir.test na2.weir.test || rc=1
	check_leaf "acme-client dns-01" "$out/dns01.leaf.pem" "$out/dns01.rest.pem" "*.nw.weir.test" nw.weir.test || rc=1
	check_leaf "acme-client after key rollover" "$out/rollover.leaf.pem" "$out/rollover.rest.pem" na3.weir.test || rc=1
	check_revoked "acme-client" "$out/http01.leaf.pem" "$out/http01.rest.pem" "$out/dns01.leaf.pem" "Superseded" || rc=1
	return "$rc"
}
