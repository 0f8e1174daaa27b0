# SPDX-License-Identifier: Apache-2.0

# More ACME clients, each from Debian's packages, sourced by run.sh:
#
# - dehydrated (a bash client that parses weir's JSON with grep and sed):
#   http-01 through a webroot, served on the http-01 port by
#   python3 -m http.server, for two names and an RSA 2048 key; a forced
#   renewal; revocation with the account key.
# - uacme (C, libcurl), with P-384 keys: tls-alpn-01 answered by its ualpn
#   responder; a forced renewal; dns-01 for a wildcard and its base name
#   through the test DNS server; revocation (keyCompromise). uacme trusts
#   only the system's CA bundle, so it runs in a private mount namespace
#   where that bundle is weir's root (unshare -m, as root); nothing outside
#   it changes.
# - Caddy (acmez), Debian's 2.6.2 and a current one built from the module
#   proxy (caddy-new.sh): obtains certificates for two sites on its own,
#   one by http-01 and one by tls-alpn-01, and serves them; each served
#   chain is the leaf and the intermediate and verifies to weir's root. The
#   current Caddy also asks renewalInfo (ARI) about each certificate and
#   gets an answer.
#
# Every server a flow starts (the webroot, ualpn, Caddy) listens on
# 127.0.0.1 only and is stopped by PID before the next flow, which waits
# until the ports are free again.

CLIENTS_CMDS=(dehydrated uacme ualpn caddy unshare)

# clients_missing prints the commands of these flows that are not installed.
clients_missing() { missing_of "${CLIENTS_CMDS[@]}"; }

# then_stop PID PORTS CMD... runs CMD, then stops the server PID (stop_pid,
# in run.sh) and waits until the (space-separated) loopback PORTS are free;
# it fails when either did.
then_stop() {
	local pid=$1 ports=$2 rc=0
	shift 2
	"$@" || rc=1
	stop_pid "$pid" || true
	# shellcheck disable=SC2086 # PORTS is a list
	wait_ports_free $ports || rc=1
	return "$rc"
}

# wait_ports_free PORT... waits (10 s at most) until nothing listens on the
# loopback ports, so the next flow can bind them.
wait_ports_free() {
	local p i
	for p in "$@"; do
		for ((i = 0; i < 100; i++)); do
			port_free "$p" && break
			sleep 0.1
		done
		port_free "$p" || {
			CLIENT_LOG=""
			fail "port $p is free again" "something still listens on 127.0.0.1:$p"
			return 1
		}
	done
}

# check_key LABEL LEAF ALGORITHM BITS checks the leaf's public key as
# openssl names it ("rsaEncryption 2048", "id-ecPublicKey 384").
check_key() {
	local text alg bits
	CLIENT_LOG=""
	text=$(openssl x509 -noout -text -in "$2" 2>&1)
	alg=$(printf '%s\n' "$text" | sed -n 's/^ *Public Key Algorithm: *//p' | head -n1)
	bits=$(printf '%s\n' "$text" | sed -n 's/^ *Public-Key: *(\([0-9]*\) bit)/\1/p' | head -n1)
	if [ "$alg $bits" = "$3 $4" ]; then
		pass "$1: the key is $3 $4"
	else
		fail "$1: the key is $3 $4" "got: $alg $bits"
		return 1
	fi
}

# ---------------------------------------------------------------------------
# dehydrated

dehydrated_flow() {
	local dir=$TMP/dehydrated web=$TMP/webroot log=$LOGS/dehydrated.log
	mkdir -p "$dir" "$web/.well-known/acme-challenge"
	cat >"$dir/config" <<EOF
CA="$DIRECTORY"
CHALLENGETYPE="http-01"
BASEDIR="$dir"
WELLKNOWN="$web/.well-known/acme-challenge"
KEY_ALGO="rsa"
KEYSIZE="2048"
CONTACT_EMAIL="$EMAIL"
CURL_OPTS="--cacert $ROOT"
EOF
	python3 -m http.server --bind 127.0.0.1 --directory "$web" "$HPORT" >"$LOGS/webroot.log" 2>&1 &
	local web_pid=$!
	PIDS+=("$web_pid")
	local i
	for ((i = 0; i < 50; i++)); do
		curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$HPORT/" && break
		sleep 0.1
	done
	then_stop "$web_pid" "$HPORT" dehydrated_steps "$dir" "$log"
}

# dehydrated_steps DIR LOG registers, issues, renews and revokes.
dehydrated_steps() {
	local dir=$1 log=$2 live=$1/certs/dh1.weir.test
	local first=$TMP/dehydrated-first.pem renewed=$TMP/dehydrated-renewed.pem chain=$TMP/dehydrated-chain.pem
	local dh=(dehydrated --config "$dir/config")
	client "dehydrated: register --accept-terms" "$log" "${dh[@]}" --register --accept-terms || return 1
	client "dehydrated: issue dh1.weir.test dh2.weir.test (http-01)" "$log" \
		"${dh[@]}" --cron --domain dh1.weir.test --domain dh2.weir.test || return 1
	check_leaf "dehydrated first" "$live/cert.pem" "$live/chain.pem" dh1.weir.test dh2.weir.test || return 1
	check_key "dehydrated first" "$live/cert.pem" rsaEncryption 2048 || return 1
	cp "$live/cert.pem" "$first"

	client "dehydrated: --cron --force (renewal)" "$log" \
		"${dh[@]}" --cron --force --domain dh1.weir.test --domain dh2.weir.test || return 1
	check_renewed "dehydrated" "$first" "$live/cert.pem" || return 1
	check_leaf "dehydrated renewed" "$live/cert.pem" "$live/chain.pem" dh1.weir.test dh2.weir.test || return 1
	# dehydrated renames a certificate it revokes; keep copies to check.
	cp "$live/cert.pem" "$renewed"
	cp "$live/chain.pem" "$chain"

	client "dehydrated: --revoke (account key)" "$log" "${dh[@]}" --revoke "$live/cert.pem" || return 1
	check_revoked "dehydrated" "$renewed" "$chain" "$first" none || return 1
}

# ---------------------------------------------------------------------------
# uacme

uacme_flow() {
	if [ "$(id -u)" != 0 ]; then
		if [ "${CI:-}" = "true" ]; then
			CLIENT_LOG=""
			fail "uacme: needs root under CI (a private mount namespace for its CA bundle)"
		else
			echo "uacme: skipped (needs root: it trusts only the system CA bundle, which the test replaces in a private mount namespace)"
		fi
		return 0
	fi
	local bundle=/etc/ssl/certs/ca-certificates.crt
	if [ ! -f "$bundle" ]; then
		CLIENT_LOG=""
		fail "uacme: $bundle exists (the bundle libcurl reads)" "install ca-certificates"
		return 1
	fi
	local dir=$TMP/uacme
	mkdir -p "$dir"
	cp "$ROOT" "$dir/bundle.pem"
	# ualpn answers tls-alpn-01 on the validation port; it proxies any other
	# connection to a backend it must be given, here weir itself (unused).
	ualpn -b "127.0.0.1@$TPORT" -c "127.0.0.1@$WPORT" -s "$dir/ualpn.sock" >"$LOGS/ualpn.log" 2>&1 &
	local ualpn_pid=$!
	PIDS+=("$ualpn_pid")
	local i
	for ((i = 0; i < 50; i++)); do
		[ -S "$dir/ualpn.sock" ] && break
		sleep 0.1
	done
	then_stop "$ualpn_pid" "$TPORT" uacme_steps "$dir" "$bundle"
}

# uacme_steps DIR BUNDLE creates an account, issues, renews, issues a
# wildcard and revokes.
uacme_steps() {
	local dir=$1 bundle=$2 log=$LOGS/uacme.log conf=$1/conf
	# uacme, in a mount namespace of its own where BUNDLE is weir's root.
	local ua=(unshare --mount sh -c 'mount --bind "$1" "$2" && shift 2 && exec uacme "$@"' uacme-ns
		"$dir/bundle.pem" "$bundle" --verbose --confdir "$conf" --acme-url "$DIRECTORY" --type EC --bits 384)
	local hook=(env UACME_TEST_UALPN_SOCK="$dir/ualpn.sock" UACME_TEST_DNS_EXEC="$BIN/lego-dns-exec.sh"
		WEIR_INTEROP_TXT_DIR="$TXT_DIR")
	local crt=$conf/ua.weir.test/cert.pem first=$TMP/uacme-first.pem renewed=$TMP/uacme-renewed
	client "uacme: new account" "$log" "${ua[@]}" --yes new "$EMAIL" || return 1
	client "uacme: issue ua.weir.test (tls-alpn-01, ualpn)" "$log" \
		"${hook[@]}" UACME_TEST_TYPE=tls-alpn-01 "${ua[@]}" --hook "$BIN/uacme-hook.sh" issue ua.weir.test || return 1
	split_chain "$crt" "$TMP/uacme-first" >/dev/null
	check_leaf "uacme first" "$TMP/uacme-first.leaf.pem" "$TMP/uacme-first.rest.pem" ua.weir.test || return 1
	check_key "uacme first" "$TMP/uacme-first.leaf.pem" id-ecPublicKey 384 || return 1
	cp "$TMP/uacme-first.leaf.pem" "$first"

	client "uacme: issue --force ua.weir.test (renewal)" "$log" \
		"${hook[@]}" UACME_TEST_TYPE=tls-alpn-01 "${ua[@]}" --force --hook "$BIN/uacme-hook.sh" issue ua.weir.test || return 1
	split_chain "$crt" "$renewed" >/dev/null
	check_renewed "uacme" "$first" "$renewed.leaf.pem" || return 1
	check_leaf "uacme renewed" "$renewed.leaf.pem" "$renewed.rest.pem" ua.weir.test || return 1

	client "uacme: issue uw.weir.test *.uw.weir.test (dns-01)" "$log" \
		"${hook[@]}" UACME_TEST_TYPE=dns-01 "${ua[@]}" --hook "$BIN/uacme-hook.sh" issue uw.weir.test '*.uw.weir.test' || return 1
	split_chain "$conf/uw.weir.test/cert.pem" "$TMP/uacme-wild" >/dev/null
	check_leaf "uacme dns-01" "$TMP/uacme-wild.leaf.pem" "$TMP/uacme-wild.rest.pem" uw.weir.test '*.uw.weir.test' || return 1

	client "uacme: revoke --reason 1 (keyCompromise)" "$log" "${ua[@]}" --reason 1 revoke "$crt" || return 1
	check_revoked "uacme" "$renewed.leaf.pem" "$renewed.rest.pem" "$first" "Key Compromise" || return 1
}

# ---------------------------------------------------------------------------
# Caddy

# caddy_flow BINARY LABEL runs one Caddy; LABEL names its directory, log
# and sites.
caddy_flow() {
	local bin=$1 label=$2
	local dir=$TMP/$label log=$LOGS/$label.log
	mkdir -p "$dir"
	# One site per challenge type; http_port and https_port are weir's
	# validation ports, so Caddy answers the challenges itself.
	local site
	cat >"$dir/Caddyfile" <<EOF
{
	admin off
	default_bind 127.0.0.1
	http_port $HPORT
	https_port $TPORT
	storage file_system $dir/storage
	email $EMAIL
}
EOF
	for site in "$label-http.weir.test:disable_tlsalpn_challenge" "$label-alpn.weir.test:disable_http_challenge"; do
		cat >>"$dir/Caddyfile" <<EOF
${site%%:*}:$TPORT {
	tls {
		issuer acme {
			dir $DIRECTORY
			trusted_roots $ROOT
			${site#*:}
		}
	}
	respond "weir interop {host}"
}
EOF
	done
	env HOME="$dir" XDG_DATA_HOME="$dir/data" XDG_CONFIG_HOME="$dir/config" \
		"$bin" run --config "$dir/Caddyfile" --adapter caddyfile >"$log" 2>&1 &
	local caddy_pid=$!
	PIDS+=("$caddy_pid")
	then_stop "$caddy_pid" "$HPORT $TPORT" caddy_checks "$caddy_pid" "$log" "$label"
}

# caddy_checks PID LOG LABEL waits (90 s at most) for each site to answer
# over HTTPS with a certificate that verifies to weir's root, then checks
# the chain it serves and that Caddy solved the challenge type meant.
caddy_checks() {
	local pid=$1 log=$2 label=$3 pair name typ i n body ok=0
	for pair in "$label-http.weir.test:http-01" "$label-alpn.weir.test:tls-alpn-01"; do
		name=${pair%%:*} typ=${pair#*:}
		CLIENT_LOG=$log
		body=""
		for ((i = 0; i < 180; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			body=$(curl -s --max-time 2 --cacert "$ROOT" --resolve "$name:$TPORT:127.0.0.1" "https://$name:$TPORT/" 2>/dev/null) && break
			body=""
			sleep 0.5
		done
		if [ "$body" != "weir interop $name" ]; then
			fail "$label serves $name over HTTPS with a certificate from weir" "got: ${body:-no answer}"
			ok=1
			continue
		fi
		pass "$label serves $name over HTTPS with a certificate from weir"
		local served=$TMP/caddy-$name.pem
		openssl s_client -connect "127.0.0.1:$TPORT" -servername "$name" -showcerts </dev/null 2>/dev/null |
			sed -n '/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p' >"$served"
		n=$(split_chain "$served" "$TMP/caddy-$name")
		if [ "$n" = 2 ]; then
			pass "$label serves $name with the leaf and the intermediate, once each"
		else
			fail "$label serves $name with the leaf and the intermediate, once each" "it serves $n certificates"
			ok=1
		fi
		check_leaf "$label $name" "$TMP/caddy-$name.leaf.pem" "$TMP/caddy-$name.rest.pem" "$name" || ok=1
		CLIENT_LOG=$log
		if grep -q "\"identifier\":\"$name\",\"challenge_type\":\"$typ\"" "$log"; then
			pass "$label solved $typ for $name"
		else
			fail "$label solved $typ for $name" "no such \"trying to solve challenge\" line in $(basename "$log")"
			ok=1
		fi
	done
	return "$ok"
}

# caddy_new_flow builds the current Caddy and runs caddy_flow with it, then
# checks that it asked weir's renewalInfo about its certificates and never
# failed to get an answer.
caddy_new_flow() {
	ensure_caddy_new || {
		CLIENT_LOG=""
		fail "build caddy $CADDY_NEW_VERSION from the module proxy" "see $LOGS/caddy-new-build.log"
		return 1
	}
	local ok=0 log=$LOGS/caddy-new.log
	caddy_flow "$CADDY_NEW" caddy-new || ok=1
	CLIENT_LOG=$log
	if [ "$(grep -c '"msg":"got renewal info"' "$log")" -ge 2 ] && ! grep -q 'error getting ARI response\|failed getting renewal information' "$log"; then
		pass "caddy $CADDY_NEW_VERSION got renewalInfo (ARI) for both certificates, with no error"
	else
		fail "caddy $CADDY_NEW_VERSION got renewalInfo (ARI) for both certificates, with no error" \
			"$(grep -E 'renewal info|ARI' "$log" | tail -n 5)"
		ok=1
	fi
	return "$ok"
}
