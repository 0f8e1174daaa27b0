# SPDX-License-Identifier: Apache-2.0

# ARI (RFC 9773) with a real client, sourced by run.sh: lego (a current
# build, see lego-new.sh) gets a certificate; `lego renew` asks weir's
# renewalInfo and does not renew while the window is ahead; after
# `weir certs renew-now` moves the window into the past, `lego renew`
# renews at once and its order carries `replaces` naming the old
# certificate, which weir checks and records.

ari_flow() {
	local path=$TMP/lego-ari name=ari.weir.test log=$LOGS/lego-ari.log
	local common=(--server "$DIRECTORY" --email "$EMAIL" --accept-tos --path "$path" --domains "$name"
		--http --http.port "127.0.0.1:$HPORT")
	local env=(env LEGO_CA_CERTIFICATES="$ROOT")
	ensure_lego_new || {
		fail "build lego $LEGO_NEW_VERSION from the module proxy" "see $LOGS/lego-new-build.log"
		return 1
	}
	client "lego $LEGO_NEW_VERSION: run $name (http-01)" "$log" "${env[@]}" "$LEGO_NEW" "${common[@]}" run || return 1
	local crt=$path/certificates/$name.crt first=$TMP/ari-first.pem
	split_chain "$crt" "$TMP/ari" >/dev/null
	cp "$TMP/ari.leaf.pem" "$first"
	check_leaf "lego ARI first" "$TMP/ari.leaf.pem" "$TMP/ari.rest.pem" "$name" || return 1

	client "lego: renew consults renewalInfo (window ahead: no renewal)" "$log" \
		"${env[@]}" "$LEGO_NEW" "${common[@]}" renew --no-random-sleep || return 1
	split_chain "$crt" "$TMP/ari" >/dev/null
	if [ "$(fingerprint_of "$TMP/ari.leaf.pem")" != "$(fingerprint_of "$first")" ]; then
		fail "lego did not renew before its ARI window" "the certificate changed"
		return 1
	fi
	if ! grep -q 'renewal-info\|renewalInfo\|ARI' "$log" && ! grep -q 'renewal-info' "$WEIR_LOG"; then
		fail "lego asked weir's renewalInfo" "no renewal-info request in the logs"
		return 1
	fi
	pass "lego asked renewalInfo and kept the certificate while the window is ahead"

	local serial
	serial=$(serial_of "$first" | tr 'A-F' 'a-f')
	CLIENT_LOG=$ADMIN_LOG
	if ! "$BIN/weir" certs renew-now "$serial" -config "$TMP/weir.yaml" >>"$ADMIN_LOG" 2>&1; then
		fail "weir certs renew-now $serial" "see $ADMIN_LOG"
		return 1
	fi
	pass "weir certs renew-now moved the window of $serial into the past"

	client "lego: renew after renew-now (ARI says renew now)" "$log" \
		"${env[@]}" "$LEGO_NEW" "${common[@]}" renew --no-random-sleep || return 1
	split_chain "$crt" "$TMP/ari" >/dev/null
	check_renewed "lego ARI" "$first" "$TMP/ari.leaf.pem" || return 1
	check_leaf "lego ARI renewed" "$TMP/ari.leaf.pem" "$TMP/ari.rest.pem" "$name" || return 1

	# weir recorded the replacement: an order of the account replaces the
	# old certificate (its ARI identifier ends with the serial's base64url).
	local orders=$TMP/ari-orders.json token
	token=$(cat "$DATA/admin-token")
	curl -s --fail --max-time 10 -H "Authorization: Bearer $token" \
		"http://127.0.0.1:$APORT/api/v1/orders?limit=20" >"$orders" || {
		fail "admin API orders" "curl failed"
		return 1
	}
	local replaced
	replaced=$(python3 -c '
import base64, json, sys
serial = bytes.fromhex(sys.argv[2].rjust(len(sys.argv[2]) + len(sys.argv[2]) % 2, "0"))
if serial[0] & 0x80:
    serial = b"\0" + serial
want = base64.urlsafe_b64encode(serial).decode().rstrip("=")
orders = json.load(open(sys.argv[1]))["items"]
print(sum(1 for o in orders if o.get("replaces", "").endswith("." + want) and o["status"] == "valid"))
' "$orders" "$serial")
	if [ "$replaced" = "1" ]; then
		pass "lego's renewal order carried replaces for $serial, and weir recorded it"
	else
		fail "lego's renewal order carried replaces" "$replaced valid orders replace $serial"
		return 1
	fi
}
