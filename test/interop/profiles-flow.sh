# SPDX-License-Identifier: Apache-2.0

# Certificate profiles (draft-aaron-acme-profiles) with a real client,
# sourced by run.sh after the lego section. Debian's lego 4.9 has no
# profiles, so this uses the current lego of lego-new.sh ($LEGO_NEW):
#   - the directory's meta.profiles lists weir's default profiles;
#   - lego run --profile shortlived gets a leaf whose lifetime
#     (notAfter - notBefore) is the profile's 7 days and whose EKU is
#     exactly TLS Web Server Authentication, with no subject CN;
#   - lego run --profile tls-client-server (mutual TLS) gets a leaf of
#     ca.certificate-lifetime (90 days) whose EKU holds TLS Web Client
#     Authentication too, with CN = its name, that openssl accepts as an
#     SSL client certificate.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, ROOT, DIRECTORY,
# EMAIL, HPORT, TPORT, pass, fail, client, split_chain, check_leaf) and
# lego-new.sh's ensure_lego_new.

PF_LOG=$LOGS/lego-profiles.log

# leaf_lifetime LEAF prints notAfter - notBefore in seconds.
leaf_lifetime() {
	local nb na
	nb=$(openssl x509 -noout -startdate -in "$1" | sed 's/^notBefore=//')
	na=$(openssl x509 -noout -enddate -in "$1" | sed 's/^notAfter=//')
	echo $(($(date -u -d "$na" +%s) - $(date -u -d "$nb" +%s)))
}

# leaf_ekus LEAF prints the extended key usages as openssl names them, one
# per line, sorted.
leaf_ekus() {
	openssl x509 -noout -ext extendedKeyUsage -in "$1" | tail -n +2 | tr ',' '\n' |
		sed 's/^[[:space:]]*//;s/[[:space:]]*$//' | grep -v '^$' | sort
}

# leaf_cn LEAF prints the subject CN, empty when there is none.
leaf_cn() {
	openssl x509 -noout -subject -nameopt RFC2253 -in "$1" | sed -n 's/^subject=//;s/^CN=\([^,]*\).*/\1/p'
}

# check_profile_leaf LABEL LEAF SECONDS EKUS CN checks the lifetime, the
# exact EKU set (newline-separated, sorted) and the subject CN.
check_profile_leaf() {
	local label=$1 leaf=$2 want_life=$3 want_eku=$4 want_cn=$5 got ok=0
	CLIENT_LOG=""
	got=$(leaf_lifetime "$leaf")
	if [ "$got" = "$want_life" ]; then
		pass "$label: lifetime (notAfter - notBefore) is ${want_life}s"
	else
		fail "$label: lifetime (notAfter - notBefore) is ${want_life}s" "got ${got}s" \
			"$(openssl x509 -noout -dates -in "$leaf")"
		ok=1
	fi
	got=$(leaf_ekus "$leaf")
	if [ "$got" = "$want_eku" ]; then
		pass "$label: EKU is exactly $(echo "$want_eku" | paste -sd, -)"
	else
		fail "$label: EKU is exactly $(echo "$want_eku" | paste -sd, -)" "got: $(echo "$got" | paste -sd, -)"
		ok=1
	fi
	got=$(leaf_cn "$leaf")
	if [ "$got" = "$want_cn" ]; then
		pass "$label: subject CN is '${want_cn}'"
	else
		fail "$label: subject CN is '${want_cn}'" "got '$got'"
		ok=1
	fi
	return "$ok"
}

profiles_flow() {
	local path=$TMP/lego-profiles dir=$TMP/directory.json got
	local common=(--server "$DIRECTORY" --email "$EMAIL" --accept-tos --path "$path")
	local env=(env LEGO_CA_CERTIFICATES="$ROOT")
	local server='TLS Web Server Authentication'
	local both
	both=$(printf '%s\n' 'TLS Web Client Authentication' "$server" | sort)

	CLIENT_LOG=""
	if ! curl -sS --fail --max-time 10 --cacert "$ROOT" -o "$dir" "$DIRECTORY"; then
		fail "directory: fetch $DIRECTORY"
		return 1
	fi
	got=$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["meta"].get("profiles", {}))))' "$dir")
	if [ "$got" = "shortlived tls-client-server tls-server" ]; then
		pass "directory: meta.profiles lists shortlived, tls-client-server, tls-server"
	else
		fail "directory: meta.profiles lists shortlived, tls-client-server, tls-server" "got: $got" "$(cat "$dir")"
		return 1
	fi

	ensure_lego_new || {
		fail "build lego $LEGO_NEW_VERSION from the module proxy" "see $LOGS/lego-new-build.log"
		return 1
	}

	local name=p.weir.test
	client "lego $LEGO_NEW_VERSION: run --profile shortlived $name (http-01)" "$PF_LOG" \
		"${env[@]}" "$LEGO_NEW" "${common[@]}" --domains "$name" --http --http.port "127.0.0.1:$HPORT" \
		run --profile shortlived || return 1
	if [ "$(split_chain "$path/certificates/$name.crt" "$TMP/profile-short")" -lt 2 ]; then
		fail "lego shortlived: bundle holds the leaf and its chain"
		return 1
	fi
	check_leaf "lego shortlived" "$TMP/profile-short.leaf.pem" "$TMP/profile-short.rest.pem" "$name" || return 1
	check_profile_leaf "lego shortlived" "$TMP/profile-short.leaf.pem" $((7 * 24 * 3600)) "$server" "" || return 1

	name=mtls.weir.test
	client "lego $LEGO_NEW_VERSION: run --profile tls-client-server $name (tls-alpn-01)" "$PF_LOG" \
		"${env[@]}" "$LEGO_NEW" "${common[@]}" --domains "$name" --tls --tls.port "127.0.0.1:$TPORT" \
		run --profile tls-client-server || return 1
	if [ "$(split_chain "$path/certificates/$name.crt" "$TMP/profile-mtls")" -lt 2 ]; then
		fail "lego tls-client-server: bundle holds the leaf and its chain"
		return 1
	fi
	check_leaf "lego tls-client-server" "$TMP/profile-mtls.leaf.pem" "$TMP/profile-mtls.rest.pem" "$name" || return 1
	check_profile_leaf "lego tls-client-server" "$TMP/profile-mtls.leaf.pem" $((90 * 24 * 3600)) "$both" "$name" || return 1
	local out
	if out=$(openssl verify -CAfile "$ROOT" -untrusted "$TMP/profile-mtls.rest.pem" -purpose sslclient "$TMP/profile-mtls.leaf.pem" 2>&1); then
		pass "lego tls-client-server: openssl verify -purpose sslclient"
	else
		fail "lego tls-client-server: openssl verify -purpose sslclient" "$out"
		return 1
	fi
}
