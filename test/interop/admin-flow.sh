# SPDX-License-Identifier: Apache-2.0

# The operator's view of certbot's account, sourced by run.sh after the
# certbot flow (account 1 has ordered twice: issue and renew). It checks
# what the acceptance of the operations work asks with a real client:
#   - weir ratelimit status --account shows the spend;
#   - with the account's order budget lowered by a live config edit,
#     weir ratelimit explain predicts the 429 that certbot then gets;
#   - weir ratelimit reset clears the bucket and certbot gets its certificate.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, ROOT, DIRECTORY,
# CB_DIRS, HPORT, EMAIL, CLIENT_TIMEOUT, pass, fail, client, check_leaf).

ADMIN_LOG=$LOGS/admin-cli.log

# weir_cli ARGS... runs a weir operator command against the running server,
# its output to stdout and errors to ADMIN_LOG.
weir_cli() {
	printf '\n$ weir %s\n' "$*" >>"$ADMIN_LOG"
	timeout 30 "$BIN/weir" "$@" -config "$TMP/weir.yaml" 2>>"$ADMIN_LOG"
}

# json_field FILE EXPR prints a value of the JSON document d in FILE.
json_field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

admin_flow() {
	local st=$TMP/status.json ex=$TMP/explain.json rem i
	CLIENT_LOG=$ADMIN_LOG
	if ! weir_cli ratelimit status --account 1 --json >"$st"; then
		fail "weir ratelimit status --account 1" "the command failed"
		return 1
	fi
	rem=$(json_field "$st" '[b["remaining"] for b in d["buckets"] if b["bucket"] == "order-creation:1"][0]')
	# The default order-creation burst is 5; certbot ordered twice.
	if [ "$rem" != "3" ]; then
		fail "weir ratelimit status --account 1 shows certbot's 2 orders" "order-creation:1 remaining=$rem, want 3"
		return 1
	fi
	pass "weir ratelimit status --account 1 shows certbot's 2 orders (3 of 5 left)"

	# Lower account 1's order budget to 1 per hour, burst 1, by editing the
	# file the server watches (an atomic rename, as editors save).
	python3 - "$TMP/weir.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = 'rate-limiting:\n  whitelist: ["127.0.0.1"]\n'
new = old + '  overrides:\n    - { limit: order-creation, key: "account:1", orders-per-account-per-hour: 1, order-burst: 1 }\n'
assert old in s
open(p + ".new", "w").write(s.replace(old, new))
PY
	mv "$TMP/weir.yaml.new" "$TMP/weir.yaml"
	for ((i = 0; i < 20; i++)); do
		weir_cli ratelimit explain --account 1 --names c.weir.test --json >"$ex" || true
		[ "$(json_field "$ex" 'd.get("limit", "")' 2>/dev/null)" = "order-creation" ] && break
		sleep 0.5
	done
	if [ "$(json_field "$ex" 'd.get("allowed")')" != "False" ] || [ "$(json_field "$ex" 'd.get("key")')" != "1" ]; then
		fail "weir ratelimit explain predicts a 429 by order-creation:1" "$(cat "$ex")"
		return 1
	fi
	pass "weir ratelimit explain predicts a 429 by order-creation:1 after the live edit (retry after $(json_field "$ex" 'd["retry_after"]'))"

	local cb_out=$TMP/certbot-429.log
	env REQUESTS_CA_BUNDLE="$ROOT" timeout "$CLIENT_TIMEOUT" certbot certonly "${CB_DIRS[@]}" \
		--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d c.weir.test --cert-name c.weir.test --agree-tos -m "$EMAIL" --non-interactive --no-eff-email >"$cb_out" 2>&1
	if ! grep -qs 'rateLimited' "$cb_out" "$TMP/certbot/logs/letsencrypt.log" ||
		! grep -qs 'order-creation' "$cb_out" "$TMP/certbot/logs/letsencrypt.log"; then
		cat "$cb_out" >>"$ADMIN_LOG"
		fail "certbot gets the predicted 429" "no rateLimited / order-creation in certbot's output"
		return 1
	fi
	pass "certbot gets the predicted 429 (rateLimited by order-creation)"

	if ! weir_cli ratelimit reset order-creation:1 >>"$ADMIN_LOG"; then
		fail "weir ratelimit reset order-creation:1" "the command failed"
		return 1
	fi
	weir_cli ratelimit status order-creation:1 --json >"$st"
	if [ "$(json_field "$st" 'd["buckets"][0]["remaining"]')" != "1" ]; then
		fail "weir ratelimit reset makes order-creation:1 full" "$(cat "$st")"
		return 1
	fi
	pass "weir ratelimit reset makes order-creation:1 full again (1 of 1)"

	client "certbot: certonly c.weir.test after the reset" "$TMP/certbot-after-reset.log" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot certonly "${CB_DIRS[@]}" \
		--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d c.weir.test --cert-name c.weir.test --agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
	check_leaf "certbot after the reset" "$TMP/certbot/config/live/c.weir.test/cert.pem" \
		"$TMP/certbot/config/live/c.weir.test/chain.pem" c.weir.test || return 1

	CLIENT_LOG=$ADMIN_LOG
	if weir_cli certs list -q c.weir.test | grep -q 'c.weir.test'; then
		pass "weir certs list shows certbot's new certificate"
	else
		fail "weir certs list shows certbot's new certificate" "not listed"
	fi
}
