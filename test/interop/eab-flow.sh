# SPDX-License-Identifier: Apache-2.0

# External Account Binding (RFC 8555 §7.3.4) with real clients, sourced by
# run.sh after the operator CLI section. The server does not require EAB
# (the other steps register without it), but checks a binding whenever one
# is sent:
#   - weir eab create makes two keys;
#   - certbot register --eab-kid/--eab-hmac-key (its own --config-dir, so a
#     new account) and certonly get a certificate;
#   - Debian's lego 4.9 with --eab --kid --hmac (its own --path) gets one;
#   - weir eab list shows both keys bound, to two different accounts;
#   - certbot with a fresh --config-dir and the certbot key again is
#     refused: each key binds once.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, ROOT, DIRECTORY,
# HPORT, EMAIL, CLIENT_TIMEOUT, pass, fail, client, check_leaf,
# split_chain).

EAB_LOG=$LOGS/eab.log

# eab_cli ARGS... runs a weir operator command against the running server,
# its output to stdout and errors to EAB_LOG.
eab_cli() {
	printf '\n$ weir %s\n' "$*" >>"$EAB_LOG"
	timeout 30 "$BIN/weir" "$@" -config "$TMP/weir.yaml" 2>>"$EAB_LOG"
}

# eab_field FILE EXPR prints a value of the JSON document d in FILE.
eab_field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# eab_certbot_dirs DIR prints certbot's directory flags for DIR, one a line.
eab_certbot_dirs() { printf '%s\n' --config-dir "$1/config" --work-dir "$1/work" --logs-dir "$1/logs"; }

eab_flow() {
	local cbk=$TMP/eab-certbot.json lgk=$TMP/eab-lego.json list=$TMP/eab-list.json
	local cb_kid cb_hmac lg_kid lg_hmac
	local -a cb_dirs again_dirs
	CLIENT_LOG=$EAB_LOG
	if ! eab_cli eab create --label team-certbot --json >"$cbk" ||
		! eab_cli eab create --label team-lego --json >"$lgk"; then
		fail "weir eab create --label … --json" "the command failed"
		return 1
	fi
	cb_kid=$(eab_field "$cbk" 'd["key_id"]')
	cb_hmac=$(eab_field "$cbk" 'd["hmac_key"]')
	lg_kid=$(eab_field "$lgk" 'd["key_id"]')
	lg_hmac=$(eab_field "$lgk" 'd["hmac_key"]')
	if [ -z "$cb_kid" ] || [ -z "$cb_hmac" ] || [ -z "$lg_kid" ] || [ -z "$lg_hmac" ] || [ "$cb_kid" = "$lg_kid" ]; then
		fail "weir eab create makes two keys" "$(cat "$cbk" "$lgk")"
		return 1
	fi
	pass "weir eab create makes two keys ($cb_kid, $lg_kid)"

	# certbot: a new account in its own config dir, bound with the first key.
	mapfile -t cb_dirs < <(eab_certbot_dirs "$TMP/certbot-eab")
	client "certbot: register --eab-kid --eab-hmac-key" "$EAB_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot register "${cb_dirs[@]}" \
		--server "$DIRECTORY" --eab-kid "$cb_kid" --eab-hmac-key "$cb_hmac" \
		--agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
	client "certbot: certonly eab.weir.test with the EAB account (http-01)" "$EAB_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot certonly "${cb_dirs[@]}" \
		--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d eab.weir.test --cert-name eab.weir.test --agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
	check_leaf "certbot EAB" "$TMP/certbot-eab/config/live/eab.weir.test/cert.pem" \
		"$TMP/certbot-eab/config/live/eab.weir.test/chain.pem" eab.weir.test || return 1

	# lego: its own --path, so a new account, bound with the second key.
	local lg=$TMP/lego-eab n
	client "lego: run --eab --kid --hmac eab-lego.weir.test (http-01)" "$EAB_LOG" \
		env LEGO_CA_CERTIFICATES="$ROOT" lego --server "$DIRECTORY" --email "$EMAIL" --accept-tos --path "$lg" \
		--eab --kid "$lg_kid" --hmac "$lg_hmac" \
		--domains eab-lego.weir.test --http --http.port "127.0.0.1:$HPORT" run || return 1
	n=$(split_chain "$lg/certificates/eab-lego.weir.test.crt" "$TMP/eab-lego")
	if [ "$n" -lt 2 ]; then
		fail "lego EAB: bundle holds the leaf and its chain" "it holds $n certificate(s)"
		return 1
	fi
	check_leaf "lego EAB" "$TMP/eab-lego.leaf.pem" "$TMP/eab-lego.rest.pem" eab-lego.weir.test || return 1

	# weir eab list: both keys bound, to two accounts, and no HMAC key shown.
	CLIENT_LOG=$EAB_LOG
	if ! eab_cli eab list --json >"$list"; then
		fail "weir eab list --json" "the command failed"
		return 1
	fi
	local bound
	bound=$(python3 - "$list" "$cb_kid" "$lg_kid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = {k["key_id"]: k for k in d["items"]}
accts = []
for kid in sys.argv[2:]:
    k = keys.get(kid, {})
    if k.get("status") != "bound" or not k.get("bound_account") or k.get("hmac_key"):
        print("bad: %s" % json.dumps(k))
        sys.exit(0)
    accts.append(k["bound_account"])
print("ok" if len(set(accts)) == 2 else "bad: same account %s" % accts)
PY
)
	if [ "$bound" = ok ]; then
		pass "weir eab list shows both keys bound, to two accounts"
	else
		fail "weir eab list shows both keys bound, to two accounts" "$bound" "$(cat "$list")"
		return 1
	fi

	# The certbot key again, from a fresh config dir (a new account key):
	# refused, since each key binds once.
	local again=$TMP/certbot-eab-again.log rc=0
	mapfile -t again_dirs < <(eab_certbot_dirs "$TMP/certbot-eab-again")
	env REQUESTS_CA_BUNDLE="$ROOT" timeout -k 10 "$CLIENT_TIMEOUT" certbot register "${again_dirs[@]}" \
		--server "$DIRECTORY" --eab-kid "$cb_kid" --eab-hmac-key "$cb_hmac" \
		--agree-tos -m "$EMAIL" --non-interactive --no-eff-email >"$again" 2>&1 </dev/null || rc=$?
	if [ "$rc" -ne 0 ] && grep -qs 'already bound' "$again" "$TMP/certbot-eab-again/logs/letsencrypt.log"; then
		pass "certbot with a bound EAB key and a new account key is refused (unauthorized: already bound)"
	else
		cat "$again" >>"$EAB_LOG"
		fail "certbot with a bound EAB key and a new account key is refused" "exit status $rc; no 'already bound' in its output"
		return 1
	fi
}
