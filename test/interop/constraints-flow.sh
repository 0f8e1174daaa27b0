# SPDX-License-Identifier: Apache-2.0

# Name constraints (ca.name-constraints), sourced by run.sh after
# ha-flow.sh (for ha_free_ports). A second weir, with a data directory and
# ports of its own, generates a root and intermediate constrained to
# nc.weir.test (hr.nc.weir.test excluded):
#   - openssl shows the critical constraints on the root;
#   - lego (Debian's) gets a certificate for a.nc.weir.test by http-01,
#     which verifies to that root;
#   - a leaf for www.example.com signed with openssl directly with the
#     intermediate's key (as with a stolen key) fails openssl verify with a
#     permitted subtree violation, and one for hr.nc.weir.test with an
#     excluded subtree violation, while one for in.nc.weir.test signed the
#     same way verifies;
#   - after the policy is widened to wide.weir.test and weir reloads (it
#     logs a warning for that domain), lego's order for x.wide.weir.test is
#     refused: the constraints do not permit it.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, EMAIL, HPORT,
# TPORT, DPORT, pass, fail, client, stop_pid, check_leaf, split_chain,
# weir_yaml) and
# ha_free_ports.

NC_LOG=$LOGS/name-constraints.log

# nc_config DIR WPORT APORT DOMAINS writes the second weir's config
# (weir_yaml, in run.sh).
nc_config() {
	weir_yaml "$1/data" "$2" "$3" "  name-constraints: true
  policy:
    allowed-domains: [$4]
    denied-domains: [hr.nc.weir.test]" >"$1/weir.yaml"
}

# nc_sign DIR NAME signs a leaf for NAME with the intermediate's key,
# bypassing weir, into DIR/NAME.pem.
nc_sign() {
	local dir=$1 name=$2
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/$name.key" \
		-subj "/O=weir interop" -addext "subjectAltName=DNS:$name" -out "$dir/$name.csr" 2>>"$NC_LOG" &&
		openssl x509 -req -in "$dir/$name.csr" -CA "$dir/data/ca/intermediate.pem" \
			-CAkey "$dir/data/ca/intermediate-key.pem" -set_serial "0x$(openssl rand -hex 16)" -days 1 \
			-copy_extensions copy -out "$dir/$name.pem" 2>>"$NC_LOG"
}

# nc_verify DIR NAME WANT runs openssl verify on DIR/NAME.pem; WANT is OK
# or the text openssl must give for the violation.
nc_verify() {
	local dir=$1 name=$2 want=$3 out
	out=$(openssl verify -CAfile "$dir/data/root.pem" -untrusted "$dir/data/ca/intermediate.pem" "$dir/$name.pem" 2>&1)
	if [ "$want" = OK ] && [[ $out == *": OK" ]]; then
		pass "name constraints: a leaf for $name signed with the intermediate's key verifies"
	elif [ "$want" != OK ] && [[ $out == *"$want"* ]]; then
		pass "name constraints: a leaf for $name signed with the intermediate's key fails openssl verify ($want)"
	else
		CLIENT_LOG=""
		fail "name constraints: openssl verify of a leaf for $name: want $want" "$out"
		return 1
	fi
}

nc_flow() {
	local dir=$TMP/nc wport aport pid out i name rc=0
	mkdir -p "$dir"
	read -r wport aport < <(ha_free_ports 2)
	nc_config "$dir" "$wport" "$aport" "nc.weir.test"
	local url=https://127.0.0.1:$wport/directory
	"$BIN/weir" serve -config "$dir/weir.yaml" >"$dir/weir.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for ((i = 0; i < 80; i++)); do
		[ -s "$dir/data/root.pem" ] && curl -s --fail --max-time 2 --cacert "$dir/data/root.pem" -o /dev/null "$url" && break
		sleep 0.25
	done
	if ! curl -s --fail --max-time 2 --cacert "$dir/data/root.pem" -o /dev/null "$url"; then
		CLIENT_LOG=$dir/weir.log
		fail "name constraints: weir with ca.name-constraints serves $url"
		stop_pid "$pid" || true
		return 1
	fi
	pass "name constraints: weir with ca.name-constraints serves $url"

	out=$(openssl x509 -in "$dir/data/root.pem" -noout -ext nameConstraints 2>&1)
	if [[ $out == *"Name Constraints: critical"* && $out == *"DNS:nc.weir.test"* && $out == *"Excluded"*"DNS:hr.nc.weir.test"* ]]; then
		pass "name constraints: the root carries them, critical (nc.weir.test permitted, hr.nc.weir.test excluded)"
	else
		CLIENT_LOG=""
		fail "name constraints: the root carries them, critical" "$out"
		rc=1
	fi

	local ROOT=$dir/data/root.pem # check_leaf verifies against this root
	local lg=(lego --server "$url" --email "$EMAIL" --accept-tos --path "$dir/lego")
	if client "name constraints: lego run a.nc.weir.test (http-01)" "$NC_LOG" \
		env LEGO_CA_CERTIFICATES="$ROOT" "${lg[@]}" --domains a.nc.weir.test --http --http.port "127.0.0.1:$HPORT" run; then
		split_chain "$dir/lego/certificates/a.nc.weir.test.crt" "$dir/a" >/dev/null
		check_leaf "name constraints: lego's a.nc.weir.test" "$dir/a.leaf.pem" "$dir/a.rest.pem" a.nc.weir.test || rc=1
	else
		rc=1
	fi

	for name in in.nc.weir.test www.example.com hr.nc.weir.test; do
		if ! nc_sign "$dir" "$name"; then
			CLIENT_LOG=$NC_LOG
			fail "name constraints: openssl signs a leaf for $name with the intermediate's key"
			rc=1
			continue
		fi
	done
	nc_verify "$dir" in.nc.weir.test OK || rc=1
	nc_verify "$dir" www.example.com "permitted subtree violation" || rc=1
	nc_verify "$dir" hr.nc.weir.test "excluded subtree violation" || rc=1

	# Widen the policy past the constraints and reload.
	nc_config "$dir" "$wport" "$aport" "nc.weir.test, wide.weir.test"
	kill -HUP "$pid"
	for ((i = 0; i < 40; i++)); do
		grep -q 'configuration reloaded' "$dir/weir.log" && break
		sleep 0.25
	done
	if grep -q 'name constraints do not permit.*domain=wide.weir.test' "$dir/weir.log"; then
		pass "name constraints: the reload warns that wide.weir.test is outside them"
	else
		CLIENT_LOG=$dir/weir.log
		fail "name constraints: the reload warns that wide.weir.test is outside them"
		rc=1
	fi
	CLIENT_LOG=$NC_LOG
	if env LEGO_CA_CERTIFICATES="$ROOT" timeout -k 10 "$CLIENT_TIMEOUT" "${lg[@]}" --domains x.wide.weir.test \
		--http --http.port "127.0.0.1:$HPORT" run >>"$NC_LOG" 2>&1 </dev/null; then
		fail "name constraints: lego's order for x.wide.weir.test is refused" "lego got a certificate"
		rc=1
	elif tail -n 20 "$NC_LOG" | grep -q "rejectedIdentifier.*name constraints do not permit"; then
		pass "name constraints: lego's order for x.wide.weir.test is refused (rejectedIdentifier: the constraints do not permit it)"
	else
		fail "name constraints: lego's order for x.wide.weir.test is refused with rejectedIdentifier naming the constraints"
		rc=1
	fi
	stop_pid "$pid" || true
	return "$rc"
}
