# SPDX-License-Identifier: Apache-2.0

# Tenants with real clients, sourced by run.sh after the External Account
# Binding section (eab-flow.sh). Two teams, two zones:
#   - weir tenant create team-a (.a.test, delegated zone .auto.a.test) and
#     team-b (.b.test, delegated zone .auto.b.test); weir eab create
#     --tenant makes a key of each;
#   - certbot, bound with team-a's key, gets www.a.test (http-01) and
#     www.auto.a.test (delegated: no challenge), and is refused www.b.test
#     with the tenant's rule in its output;
#   - Debian's lego, bound with team-b's key, gets www.b.test (http-01) and
#     www.auto.b.test (delegated), and is refused www.a.test likewise.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, ROOT, DIRECTORY,
# HPORT, EMAIL, CLIENT_TIMEOUT, pass, fail, client, check_leaf,
# split_chain) and eab-flow.sh's eab_field and eab_certbot_dirs.

TN_LOG=$LOGS/tenants.log

# tn_cli ARGS... runs a weir operator command against the running server,
# its output to stdout and errors to TN_LOG.
tn_cli() {
	printf '\n$ weir %s\n' "$*" >>"$TN_LOG"
	timeout 30 "$BIN/weir" "$@" -config "$TMP/weir.yaml" 2>>"$TN_LOG"
}

# tn_refused LABEL RC OUT TEXT... passes when the client command that
# exited with RC and wrote OUT failed with every TEXT in OUT.
tn_refused() {
	local label=$1 rc=$2 out=$3 text
	shift 3
	CLIENT_LOG=$TN_LOG
	if [ "$rc" -eq 0 ]; then
		cat "$out" >>"$TN_LOG"
		fail "$label" "the client succeeded"
		return 1
	fi
	for text in "$@"; do
		if ! grep -qF -- "$text" "$out"; then
			cat "$out" >>"$TN_LOG"
			fail "$label" "exit status $rc; no '$text' in its output"
			return 1
		fi
	done
	pass "$label"
}

tenants_flow() {
	local ka=$TMP/tenant-a-key.json kb=$TMP/tenant-b-key.json
	local a_kid a_hmac b_kid b_hmac out rc name
	local -a cb_dirs
	CLIENT_LOG=$TN_LOG
	if ! tn_cli tenant create team-a --allow .a.test --delegated-zone .auto.a.test >>"$TN_LOG" ||
		! tn_cli tenant create team-b --allow .b.test --delegated-zone .auto.b.test >>"$TN_LOG"; then
		fail "weir tenant create team-a, team-b" "the command failed"
		return 1
	fi
	if ! tn_cli eab create --label team-a --tenant team-a --json >"$ka" ||
		! tn_cli eab create --label team-b --tenant team-b --json >"$kb"; then
		fail "weir eab create --tenant team-a, team-b" "the command failed"
		return 1
	fi
	a_kid=$(eab_field "$ka" 'd["key_id"]')
	a_hmac=$(eab_field "$ka" 'd["hmac_key"]')
	b_kid=$(eab_field "$kb" 'd["key_id"]')
	b_hmac=$(eab_field "$kb" 'd["hmac_key"]')
	if [ "$(eab_field "$ka" 'd["tenant"]')" != team-a ] || [ "$(eab_field "$kb" 'd["tenant"]')" != team-b ]; then
		fail "weir eab create --tenant makes a key of each tenant" "$(cat "$ka" "$kb")"
		return 1
	fi
	pass "weir tenant create and eab create --tenant: team-a (.a.test), team-b (.b.test)"

	# certbot with team-a's key.
	mapfile -t cb_dirs < <(eab_certbot_dirs "$TMP/certbot-tenant-a")
	client "certbot (team-a): register --eab-kid --eab-hmac-key" "$TN_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot register "${cb_dirs[@]}" \
		--server "$DIRECTORY" --eab-kid "$a_kid" --eab-hmac-key "$a_hmac" \
		--agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
	for name in www.a.test www.auto.a.test; do
		client "certbot (team-a): certonly $name" "$TN_LOG" \
			env REQUESTS_CA_BUNDLE="$ROOT" certbot certonly "${cb_dirs[@]}" \
			--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
			-d "$name" --cert-name "$name" --agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
		check_leaf "certbot (team-a) $name" "$TMP/certbot-tenant-a/config/live/$name/cert.pem" \
			"$TMP/certbot-tenant-a/config/live/$name/chain.pem" "$name" || return 1
	done
	# certbot logs "http-01 challenge for NAME" for each challenge it
	# performs; its log is the last run's.
	if grep -q 'challenge for www.auto.a.test' "$TMP/certbot-tenant-a/logs/letsencrypt.log"; then
		fail "certbot (team-a): www.auto.a.test needed no challenge" "certbot performed one (letsencrypt.log)"
		return 1
	fi
	pass "certbot (team-a): www.auto.a.test needed no challenge (delegated zone)"
	out=$TMP/certbot-tenant-a-refused.log rc=0
	env REQUESTS_CA_BUNDLE="$ROOT" timeout -k 10 "$CLIENT_TIMEOUT" certbot certonly "${cb_dirs[@]}" \
		--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d www.b.test --cert-name www.b.test --agree-tos -m "$EMAIL" --non-interactive --no-eff-email \
		>"$out" 2>&1 </dev/null || rc=$?
	# Debian's certbot 2.1 (josepy on Python 3.11) shows a problem that
	# names an identifier as "AttributeError: can't set attribute"; the
	# server's problem is in its log.
	cat "$TMP/certbot-tenant-a/logs/letsencrypt.log" >>"$out"
	tn_refused "certbot (team-a) is refused www.b.test, naming the tenant rule" "$rc" "$out" \
		'tenant "team-a" forbids "www.b.test"' "allowed-names" || return 1

	# lego with team-b's key: its own --path, so a new account.
	local lg=$TMP/lego-tenant-b n
	local -a lg_common=(--server "$DIRECTORY" --email "$EMAIL" --accept-tos --path "$lg" --eab --kid "$b_kid" --hmac "$b_hmac")
	for name in www.b.test www.auto.b.test; do
		client "lego (team-b): run $name" "$TN_LOG" \
			env LEGO_CA_CERTIFICATES="$ROOT" lego "${lg_common[@]}" \
			--domains "$name" --http --http.port "127.0.0.1:$HPORT" run || return 1
		n=$(split_chain "$lg/certificates/$name.crt" "$TMP/tenant-lego-$name")
		if [ "$n" -lt 2 ]; then
			fail "lego (team-b) $name: bundle holds the leaf and its chain" "it holds $n certificate(s)"
			return 1
		fi
		check_leaf "lego (team-b) $name" "$TMP/tenant-lego-$name.leaf.pem" "$TMP/tenant-lego-$name.rest.pem" "$name" || return 1
	done
	# lego logs "[NAME] acme: authorization already valid; skipping
	# challenge" for an authorization that is valid when it asks.
	CLIENT_LOG=$TN_LOG
	if grep -qF '[www.auto.b.test] acme: authorization already valid' "$TN_LOG" &&
		! grep -qF '[www.auto.b.test] acme: use http-01 solver' "$TN_LOG"; then
		pass "lego (team-b): www.auto.b.test needed no challenge (delegated zone)"
	else
		fail "lego (team-b): www.auto.b.test needed no challenge (delegated zone)" "no 'authorization already valid' for it in tenants.log"
		return 1
	fi
	out=$TMP/lego-tenant-b-refused.log rc=0
	env LEGO_CA_CERTIFICATES="$ROOT" timeout -k 10 "$CLIENT_TIMEOUT" lego "${lg_common[@]}" \
		--domains www.a.test --http --http.port "127.0.0.1:$HPORT" run >"$out" 2>&1 </dev/null || rc=$?
	tn_refused "lego (team-b) is refused www.a.test, naming the tenant rule" "$rc" "$out" \
		'tenant "team-b" forbids "www.a.test"' "allowed-names" || return 1
}
