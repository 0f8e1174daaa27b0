# SPDX-License-Identifier: Apache-2.0

# Signers (issue 25, acceptance 2), sourced by run.sh after
# constraints-flow.sh (for ha_free_ports). Two more weirs, each with a data
# directory and ports of its own, made by weir init and then changed so
# that the intermediate's key is
#   - encrypted: the key file rewritten as encrypted PKCS#8 (openssl pkcs8
#     -topk8 -v2 aes-256-cbc), its passphrase in a file
#     (ca.intermediate.signer.type: encrypted-file);
#   - pkcs11: the key imported into a SoftHSM2 token of its own and the
#     file deleted (type: pkcs11; the weir built with -tags pkcs11).
# Against each, certbot (http-01) and lego (http-01) get, renew and revoke
# a certificate; openssl verifies every chain to that weir's root and the
# revocations on its CRL. The audit trail of each verifies at the end.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, EMAIL, HPORT,
# pass, fail, client, stop_pid, check_leaf, check_renewed, check_revoked,
# split_chain, weir_yaml) and ha_free_ports.

SG_LOG=$LOGS/signers.log
SOFTHSM_MODULE=/usr/lib/softhsm/libsofthsm2.so

# sg_missing prints what the pkcs11 signer's flow needs and lacks.
sg_missing() {
	local out=()
	command -v softhsm2-util >/dev/null 2>&1 || out+=(softhsm2-util)
	[ -f "$SOFTHSM_MODULE" ] || out+=("$SOFTHSM_MODULE")
	command -v gcc >/dev/null 2>&1 || out+=(gcc)
	echo "${out[*]:-}"
}

# sg_prepare MODE DIR makes DIR/data with weir init, moves its
# intermediate's key behind MODE's signer and prints the ca: block's body.
sg_prepare() {
	local mode=$1 dir=$2 key=$2/data/ca/intermediate-key.pem
	"$BIN/weir" init -config "$dir/init.yaml" -data-dir "$dir/data" >>"$SG_LOG" 2>&1 || return 1
	case $mode in
	encrypted)
		openssl rand -hex 24 >"$dir/passphrase"
		openssl pkcs8 -topk8 -v2 aes-256-cbc -in "$key" -out "$key.enc" -passout "file:$dir/passphrase" 2>>"$SG_LOG" || return 1
		mv "$key.enc" "$key" && chmod 0600 "$key" || return 1
		grep -q 'BEGIN ENCRYPTED PRIVATE KEY' "$key" || return 1
		printf '  intermediate:\n    signer:\n      type: encrypted-file\n      passphrase: { file: "%s" }\n' "$dir/passphrase"
		;;
	pkcs11)
		mkdir -p "$dir/tokens"
		printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n' "$dir/tokens" >"$dir/softhsm2.conf"
		printf '1234\n' >"$dir/pin"
		chmod 0600 "$dir/pin"
		SOFTHSM2_CONF=$dir/softhsm2.conf softhsm2-util --init-token --free --label weir-interop \
			--so-pin 5678 --pin 1234 >>"$SG_LOG" 2>&1 || return 1
		SOFTHSM2_CONF=$dir/softhsm2.conf softhsm2-util --import "$key" --token weir-interop --pin 1234 \
			--label weir-intermediate --id 01 >>"$SG_LOG" 2>&1 || return 1
		rm -f "$key"
		printf '  intermediate:\n    signer:\n      type: pkcs11\n      pkcs11:\n        module: "%s"\n        token-label: weir-interop\n        key-label: weir-intermediate\n        pin: { file: "%s" }\n' \
			"$SOFTHSM_MODULE" "$dir/pin"
		;;
	esac
}

# sg_flow MODE WEIR_BINARY runs one signer's weir and the clients on it.
sg_flow() {
	local mode=$1 weir=$2 dir=$TMP/signer-$1 wport aport pid body rc=0
	mkdir -p "$dir"
	read -r wport aport < <(ha_free_ports 2)
	if ! body=$(sg_prepare "$mode" "$dir"); then
		CLIENT_LOG=$SG_LOG
		fail "signer $mode: weir init and the key moved behind the signer"
		return 1
	fi
	# A revocation reaches the CRL within crl-delay (check_revoked waits
	# CRL_WAIT for it).
	body+=$'\n  crl-delay: 1s'
	weir_yaml "$dir/data" "$wport" "$aport" "$body" >"$dir/weir.yaml"
	printf 'audit:\n  replica-id: %s\n' "$mode" >>"$dir/weir.yaml"
	local url=https://127.0.0.1:$wport/directory ROOT=$dir/data/root.pem # check_* verify against this root
	SOFTHSM2_CONF=$dir/softhsm2.conf "$weir" serve -config "$dir/weir.yaml" >"$dir/weir.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	# Up to 20 s for the directory (curl retries while weir starts).
	if ! timeout 20 bash -c 'until curl -s --fail --max-time 2 --cacert "$1" -o /dev/null "$2"; do sleep 0.25; done' \
		sh "$ROOT" "$url"; then
		CLIENT_LOG=$dir/weir.log
		fail "signer $mode: weir serves $url"
		stop_pid "$pid" || true
		return 1
	fi
	pass "signer $mode: weir serves $url"

	# certbot: get, renew, revoke.
	local cb=$dir/certbot live first=$dir/certbot-first.pem name=cb.$1.weir.test
	local cbdirs=(--config-dir "$cb/config" --work-dir "$cb/work" --logs-dir "$cb/logs")
	live=$cb/config/live/$name
	if client "signer $mode: certbot certonly $name (http-01)" "$SG_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot certonly "${cbdirs[@]}" \
		--server "$url" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d "$name" --agree-tos -m "$EMAIL" --non-interactive --no-eff-email &&
		cp "$live/cert.pem" "$first" &&
		check_leaf "signer $mode: certbot first" "$live/cert.pem" "$live/chain.pem" "$name" &&
		client "signer $mode: certbot renew --force-renewal" "$SG_LOG" \
			env REQUESTS_CA_BUNDLE="$ROOT" certbot renew "${cbdirs[@]}" \
			--cert-name "$name" --force-renewal --no-random-sleep-on-renew --non-interactive &&
		check_renewed "signer $mode: certbot" "$first" "$live/cert.pem" &&
		check_leaf "signer $mode: certbot renewed" "$live/cert.pem" "$live/chain.pem" "$name" &&
		client "signer $mode: certbot revoke --reason keycompromise" "$SG_LOG" \
			env REQUESTS_CA_BUNDLE="$ROOT" certbot revoke "${cbdirs[@]}" \
			--server "$url" --cert-path "$live/cert.pem" --reason keycompromise \
			--non-interactive --no-delete-after-revoke; then
		check_revoked "signer $mode: certbot" "$live/cert.pem" "$live/chain.pem" "$first" "Key Compromise" || rc=1
	else
		rc=1
	fi

	# lego: get, renew, revoke.
	local lg=(env LEGO_CA_CERTIFICATES="$ROOT" lego --server "$url" --email "$EMAIL" --accept-tos --path "$dir/lego")
	local lname=lego.$1.weir.test lfirst=$dir/lego-first.pem
	local crt=$dir/lego/certificates/$lname.crt
	local http=(--domains "$lname" --http --http.port "127.0.0.1:$HPORT")
	if client "signer $mode: lego run $lname (http-01)" "$SG_LOG" "${lg[@]}" "${http[@]}" run &&
		[ "$(split_chain "$crt" "$dir/lego1")" -ge 2 ] &&
		check_leaf "signer $mode: lego first" "$dir/lego1.leaf.pem" "$dir/lego1.rest.pem" "$lname" &&
		cp "$dir/lego1.leaf.pem" "$lfirst" &&
		client "signer $mode: lego renew $lname" "$SG_LOG" "${lg[@]}" "${http[@]}" renew --days 9999 --no-random-sleep &&
		[ "$(split_chain "$crt" "$dir/lego2")" -ge 2 ] &&
		check_renewed "signer $mode: lego" "$lfirst" "$dir/lego2.leaf.pem" &&
		check_leaf "signer $mode: lego renewed" "$dir/lego2.leaf.pem" "$dir/lego2.rest.pem" "$lname" &&
		client "signer $mode: lego revoke $lname (reason 4, superseded)" "$SG_LOG" \
			"${lg[@]}" --domains "$lname" revoke --keep --reason 4; then
		check_revoked "signer $mode: lego" "$dir/lego2.leaf.pem" "$dir/lego2.rest.pem" "$lfirst" "Superseded" || rc=1
	else
		CLIENT_LOG=$SG_LOG
		[ "$rc" = 1 ] || fail "signer $mode: lego get, renew and revoke"
		rc=1
	fi

	stop_pid "$pid" || true
	local out
	CLIENT_LOG=""
	if out=$("$weir" audit verify -config "$dir/weir.yaml" 2>&1) && [[ $out == *"chain intact"* ]]; then
		pass "signer $mode: weir audit verify ($out)"
	else
		fail "signer $mode: weir audit verify" "$out"
		rc=1
	fi
	return "$rc"
}

signers_flow() {
	local rc=0 missing
	sg_flow encrypted "$BIN/weir" || rc=1
	missing=$(sg_missing)
	if [ -n "$missing" ]; then
		if [ "${CI:-}" = "true" ]; then
			CLIENT_LOG=""
			fail "signer pkcs11: needs $missing (apt-get install -y softhsm2 gcc)"
			return 1
		fi
		echo "signer pkcs11: skipped (missing: $missing; apt-get install -y softhsm2 gcc)"
		return "$rc"
	fi
	if ! CGO_ENABLED=1 go build -tags pkcs11 -o "$BIN/weir-pkcs11" ./cmd/weir >>"$SG_LOG" 2>&1; then
		CLIENT_LOG=$SG_LOG
		fail "signer pkcs11: go build -tags pkcs11 ./cmd/weir"
		return 1
	fi
	sg_flow pkcs11 "$BIN/weir-pkcs11" || rc=1
	return "$rc"
}
