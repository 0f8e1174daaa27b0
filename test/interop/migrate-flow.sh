# SPDX-License-Identifier: Apache-2.0

# Moving a populated SQLite install to PostgreSQL (weir migrate-storage)
# with a real client, sourced by run.sh after the other flows, before the
# first-run check. Everything the earlier steps did (accounts, EAB keys,
# orders, certificates, revocations) is in the SQLite file by then:
#   - migrate-storage refuses while weir runs;
#   - weir is stopped (by its PID), migrate-storage copies the state into a
#     fresh schema and verifies the counts, and weir starts again on
#     PostgreSQL with the same data directory (CA files, token, limiter);
#   - the limiter's buckets are as they were (they stay in the data dir);
#   - certbot renews c.weir.test (issued before the move, by the operator
#     CLI step) with its old account, and the renewal is stored in
#     PostgreSQL; certbot then revokes the certificate of before the move,
#     which the CRL lists, beside a.weir.test's, revoked before the move.
# It needs WEIR_TEST_POSTGRES_DSN (a server where it may create a schema)
# and psql: without them it is skipped, except under CI=true, where that
# fails. The schema is dropped at exit (kept with KEEP=1).
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, DATA, ROOT,
# DIRECTORY, CB_DIRS, CB_LIVE, HPORT, WEIR_PID, WEIR_LOG, PIDS, pass,
# fail, client, check_leaf, check_renewed, check_revoked, pg_ready,
# pg_psql, pg_dsn, pg_drop_schema) and admin-flow's weir_cli and
# json_field; it sets WEIR_PID to the restarted weir.

MIGRATE_LOG=$LOGS/migrate-storage.log
MIGRATE_SCHEMA=""

# migrate_cleanup drops the schema; run.sh's cleanup calls it once the
# servers are stopped.
migrate_cleanup() {
	[ -n "$MIGRATE_SCHEMA" ] || return 0
	pg_drop_schema "$MIGRATE_SCHEMA" "$MIGRATE_LOG"
	MIGRATE_SCHEMA=""
}

# migrate_psql SQL runs one statement (pg_psql) logging to MIGRATE_LOG.
migrate_psql() { pg_psql "$MIGRATE_LOG" "$1"; }

# migrate_stop_weir stops the interop weir (SIGTERM to WEIR_PID, then up
# to 30 s for it to exit) and takes it out of PIDS.
migrate_stop_weir() {
	local i p keep=()
	kill -TERM "$WEIR_PID" 2>/dev/null || true
	for ((i = 0; i < 150; i++)); do
		kill -0 "$WEIR_PID" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$WEIR_PID" 2>/dev/null; then
		return 1
	fi
	wait "$WEIR_PID" 2>/dev/null || true
	for p in "${PIDS[@]}"; do
		[ "$p" = "$WEIR_PID" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# migrate_start_weir starts weir with $TMP/weir.yaml, its log appended to
# WEIR_LOG, sets WEIR_PID and waits up to 20 s for the directory.
migrate_start_weir() {
	local i deadline=$((SECONDS + 20))
	echo "----- weir restarted on PostgreSQL -----" >>"$WEIR_LOG"
	"$BIN/weir" serve -config "$TMP/weir.yaml" >>"$WEIR_LOG" 2>&1 &
	WEIR_PID=$!
	PIDS+=("$WEIR_PID")
	for ((i = 0; i < 80 && SECONDS < deadline; i++)); do
		kill -0 "$WEIR_PID" 2>/dev/null || return 1
		curl -s --fail --max-time 2 --cacert "$ROOT" -o /dev/null "$DIRECTORY" && return 0
		sleep 0.25
	done
	return 1
}

migrate_flow() {
	local live=$TMP/certbot/config/live/c.weir.test old=$TMP/migrate-c-before.pem
	local out=$TMP/migrate-storage.out st=$TMP/migrate-status.json dsn before after certs
	CLIENT_LOG=$MIGRATE_LOG
	if ! pg_ready; then
		if [ "${CI:-}" = "true" ]; then
			fail "migrate-storage: PostgreSQL answers as WEIR_TEST_POSTGRES_DSN (with psql)" "WEIR_TEST_POSTGRES_DSN=${WEIR_TEST_POSTGRES_DSN:-unset}"
			return 1
		fi
		echo "migrate-storage: skipped (set WEIR_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable and install psql)"
		return 0
	fi
	if [ ! -s "$live/cert.pem" ]; then
		fail "migrate-storage: certbot's c.weir.test certificate of the operator CLI step exists" "no $live/cert.pem"
		return 1
	fi
	cp "$live/cert.pem" "$old"

	MIGRATE_SCHEMA=weir_interop_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	if ! migrate_psql "CREATE SCHEMA $MIGRATE_SCHEMA" >/dev/null; then
		MIGRATE_SCHEMA=""
		fail "migrate-storage: create a PostgreSQL schema" "see $MIGRATE_LOG"
		return 1
	fi
	dsn=$(pg_dsn "$MIGRATE_SCHEMA")

	# While weir runs, the SQLite file is in use: refused.
	if timeout 60 "$BIN/weir" migrate-storage -config "$TMP/weir.yaml" --from sqlite --to postgres --to-dsn "$dsn" >"$out" 2>&1; then
		fail "migrate-storage refuses while weir runs" "it ran: $(cat "$out")"
		return 1
	fi
	cat "$out" >>"$MIGRATE_LOG"
	if ! grep -q 'in use' "$out"; then
		fail "migrate-storage refuses while weir runs" "$(cat "$out")"
		return 1
	fi
	pass "migrate-storage refuses while weir runs (the SQLite file is in use)"

	if ! weir_cli ratelimit status order-creation:1 --json >"$st"; then
		fail "weir ratelimit status order-creation:1 before the move" "see $ADMIN_LOG"
		return 1
	fi
	before=$(json_field "$st" 'd["buckets"][0]["remaining"]')

	if ! migrate_stop_weir; then
		fail "migrate-storage: stop weir (PID $WEIR_PID)" "it did not exit within 30 s of SIGTERM"
		return 1
	fi
	pass "weir stopped (PID $WEIR_PID)"

	if ! timeout 300 "$BIN/weir" migrate-storage -config "$TMP/weir.yaml" --from sqlite --to postgres --to-dsn "$dsn" >"$out" 2>&1; then
		cat "$out" >>"$MIGRATE_LOG"
		fail "weir migrate-storage --from sqlite --to postgres" "$(cat "$out")"
		return 1
	fi
	cat "$out" >>"$MIGRATE_LOG"
	if ! grep -q '^verified' "$out"; then
		fail "weir migrate-storage verifies the copy" "$(cat "$out")"
		return 1
	fi
	certs=$(awk '$1 == "certificates" { print $2 }' "$out")
	pass "weir migrate-storage copied and verified: $(awk '$1 ~ /^(accounts|eab_keys|authzs|challenges|orders|certificates)$/ { printf "%s%s %s", sep, $1, $2; sep = ", " }' "$out")"
	# The copy's counts, as PostgreSQL has them.
	if [ "$(migrate_psql "SELECT count(*) FROM $MIGRATE_SCHEMA.certificates")" != "$certs" ] || [ -z "$certs" ] || [ "$certs" -lt 5 ]; then
		fail "PostgreSQL holds the certificates of before the move" "copied ${certs:-?}"
		return 1
	fi

	# weir on PostgreSQL, same data directory.
	cp "$TMP/weir.yaml" "$TMP/weir-sqlite.yaml"
	if grep -q '^storage:' "$TMP/weir.yaml"; then
		fail "migrate-storage: the interop config has no storage block yet" "$(grep -A3 '^storage:' "$TMP/weir.yaml")"
		return 1
	fi
	printf 'storage:\n  driver: postgres\n  dsn: "%s"\n' "$dsn" >>"$TMP/weir.yaml"
	if ! migrate_start_weir; then
		fail "weir serves $DIRECTORY again, on PostgreSQL" "$(tail -n 20 "$WEIR_LOG")"
		return 1
	fi
	pass "weir serves $DIRECTORY again, on PostgreSQL (PID $WEIR_PID)"

	# The limiter stayed in the data directory: account 1's order budget
	# (one an hour, set by the operator CLI step and spent on c.weir.test)
	# is as it was. Reset it, as an operator would, for the renewal.
	if ! weir_cli ratelimit status order-creation:1 --json >"$st"; then
		fail "weir ratelimit status order-creation:1 after the move" "see $ADMIN_LOG"
		return 1
	fi
	after=$(json_field "$st" 'd["buckets"][0]["remaining"]')
	if [ "$before" != "$after" ]; then
		fail "the limiter's buckets stay in the data directory" "order-creation:1 remaining $before before, $after after"
		return 1
	fi
	pass "the limiter's buckets stayed in the data directory (order-creation:1: $after left)"
	if ! weir_cli ratelimit reset order-creation:1 >>"$ADMIN_LOG"; then
		fail "weir ratelimit reset order-creation:1" "see $ADMIN_LOG"
		return 1
	fi

	# certbot renews the certificate of before the move, with its account
	# of before the move.
	client "certbot: renew c.weir.test --force-renewal after the move" "$MIGRATE_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot renew "${CB_DIRS[@]}" \
		--cert-name c.weir.test --force-renewal --no-random-sleep-on-renew --non-interactive || return 1
	check_renewed "certbot after the move" "$old" "$live/cert.pem" || return 1
	check_leaf "certbot after the move" "$live/cert.pem" "$live/chain.pem" c.weir.test || return 1
	CLIENT_LOG=$MIGRATE_LOG
	if [ "$(migrate_psql "SELECT count(*) FROM $MIGRATE_SCHEMA.certificates")" = "$((certs + 1))" ]; then
		pass "the renewal is stored in PostgreSQL ($((certs + 1)) certificates)"
	else
		fail "the renewal is stored in PostgreSQL" "$(migrate_psql "SELECT count(*) FROM $MIGRATE_SCHEMA.certificates") certificates, want $((certs + 1))"
		return 1
	fi

	# certbot revokes the certificate of before the move; the CRL lists it,
	# and the revocation of before the move too.
	client "certbot: revoke the c.weir.test certificate of before the move" "$MIGRATE_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot revoke "${CB_DIRS[@]}" \
		--server "$DIRECTORY" --cert-path "$old" --reason superseded \
		--non-interactive --no-delete-after-revoke || return 1
	check_revoked "migrate: revoked after the move" "$old" "$live/chain.pem" "$live/cert.pem" "Superseded" || return 1
	if [ -s "$CB_LIVE/cert.pem" ]; then
		check_revoked "migrate: revoked before the move" "$CB_LIVE/cert.pem" "$CB_LIVE/chain.pem" "$live/cert.pem" "Key Compromise" || return 1
	fi
}
