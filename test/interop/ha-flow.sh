# SPDX-License-Identifier: Apache-2.0

# Three weir replicas behind HAProxy (Debian's haproxy, TCP mode, round
# robin) on one PostgreSQL schema and one Redis, with the stock certbot and
# lego. Sourced by run.sh after the migrate-storage flow; it leaves the
# run's main weir alone.
#   - a private redis-server on a free loopback port (the limiter's buckets
#     and the Replay-Nonces) and a fresh PostgreSQL schema (the ACME
#     objects), both shared by the replicas;
#   - three `weir serve`, each with its own data directory holding copies of
#     the run's CA files (ca/, root.pem) and admin token, the same settings
#     and server.external-url = the balancer; they start at the same time
#     (the schema migration runs once, under PostgreSQL's advisory lock);
#   - HAProxy passes TLS through (mode tcp, balance roundrobin) and checks
#     each replica's /readyz over TLS (verified against the run's root);
#   - certbot (http-01, two names) issues, renews and revokes, lego (dns-01,
#     a wildcard and its base name) issues, renews and revokes, all through
#     the balancer; each leaf verifies to the run's root, and the CRL,
#     fetched through the balancer from every replica in turn, lists each
#     revoked serial;
#   - HAProxy's stats show sessions on every replica, each replica's
#     /metrics shows signed ACME requests that it answered, and each
#     client's account, created on one replica, signed requests on others
#     (the replicas' request logs);
#   - the schema holds exactly the certificates the clients got (by serial)
#     and the two revocations, and the replicas' issued counters add up to it.
# It needs WEIR_TEST_POSTGRES_DSN with psql, haproxy and redis-server:
# without them it is skipped, except under CI=true, where that fails.
# Everything it starts is stopped by PID at its end (and by run.sh's
# cleanup if the run stops early); the schema is dropped at exit (kept with
# KEEP=1).
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, DATA, ROOT, EMAIL,
# HPORT, TPORT, DPORT, TXT_DIR, LG_ENV, PIDS, pass, fail, client,
# check_leaf, check_renewed, check_revoked, lego_check, serial_of,
# norm_serial, split_chain, pg_ready, pg_psql, pg_dsn, pg_drop_schema).

HA_DIR=$TMP/ha
HA_LOG=$LOGS/ha.log
HA_SCHEMA=""
HA_PIDS=()
HA_REPLICAS=3

# ha_cleanup drops the schema; run.sh's cleanup calls it once the servers
# are stopped.
ha_cleanup() {
	[ -n "$HA_SCHEMA" ] || return 0
	pg_drop_schema "$HA_SCHEMA" "$HA_LOG"
	HA_SCHEMA=""
}

# ha_psql SQL runs one statement (pg_psql) logging to HA_LOG.
ha_psql() { pg_psql "$HA_LOG" "$1"; }

# ha_start LOGFILE CMD... starts CMD in the background with its output in
# LOGFILE and records its PID in HA_PIDS and run.sh's PIDS; HA_PID is set.
ha_start() {
	local logfile=$1
	shift
	"$@" >"$logfile" 2>&1 </dev/null &
	HA_PID=$!
	HA_PIDS+=("$HA_PID")
	PIDS+=("$HA_PID")
}

# ha_stop stops the flow's processes (SIGTERM, up to 15 s each, then
# SIGKILL), newest first, and takes them out of PIDS.
ha_stop() {
	local j pid p keep=()
	for ((j = ${#HA_PIDS[@]} - 1; j >= 0; j--)); do
		pid=${HA_PIDS[$j]}
		stop_pid "$pid" 15 ||
			echo "note: PID $pid did not exit within 15 s of SIGTERM; killed" >>"$HA_LOG"
	done
	for p in "${PIDS[@]}"; do
		[[ " ${HA_PIDS[*]} " == *" $p "* ]] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
	HA_PIDS=()
}

# ha_free_ports N prints N distinct free loopback TCP ports.
ha_free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
n = int(sys.argv[1])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(*[s.getsockname()[1] for s in socks])
EOF
}

# ha_stats prints "server sessions status" for each server of HAProxy's
# backend weir, from "show stat" on the stats socket.
ha_stats() {
	timeout 10 python3 - "$HA_DIR/haproxy.sock" <<'EOF'
import csv, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"show stat\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
rows = list(csv.reader(data.decode().lstrip("# ").splitlines()))
head = rows[0]
for r in rows[1:]:
    if len(r) < len(head):
        continue
    d = dict(zip(head, r))
    if d["pxname"] == "weir" and d["svname"] not in ("FRONTEND", "BACKEND"):
        print(d["svname"], d["stot"], d["status"].split()[0])
EOF
}

# ha_redis CMD sends one inline command to the private Redis and prints
# the first line of its reply.
ha_redis() {
	timeout 10 python3 - "$HA_RPORT" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.argv[2].encode() + b"\r\n")
print(s.makefile("rb").readline().decode().rstrip("\r\n"))
EOF
}

# ha_metrics I prints replica I's /metrics.
ha_metrics() {
	curl -sS --fail --max-time 10 -H "Authorization: Bearer $(cat "$HA_DIR/r$1/admin-token")" \
		"http://127.0.0.1:${HA_APORTS[$1]}/metrics"
}

# ha_metric_sum FILE NAME [LABEL_REGEX] sums the samples of metric NAME in
# FILE whose labels match LABEL_REGEX (all when empty).
ha_metric_sum() {
	awk -v name="$2" -v re="${3:-}" '
		$1 == name || index($1, name "{") == 1 {
			if (re == "" || $1 ~ re) { s += $2 }
		}
		END { printf "%d\n", s }
	' "$1"
}

# ha_accounts_across LOG... prints, for each account created (new-account)
# in one of the replicas' request logs, "ID N": N is how many of the logs
# show requests signed by that account.
ha_accounts_across() {
	awk '
		{
			ep = ""; acct = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^endpoint=/) ep = substr($i, 10)
				else if ($i ~ /^account=/) acct = substr($i, 9)
			}
			if (ep == "" || acct == "") next
			seen[acct, FILENAME] = 1
			logs[FILENAME] = 1
			if (ep == "new-account") created[acct] = 1
		}
		END {
			for (a in created) {
				n = 0
				for (f in logs) if ((a, f) in seen) n++
				print a, n
			}
		}
	' "$@" | sort -n
}

# ha_crl_everywhere LABEL URL SERIAL fetches the CRL at URL through the
# balancer once per replica (round robin: consecutive connections go to
# different replicas) and checks that each copy lists SERIAL.
ha_crl_everywhere() {
	local label=$1 url=$2 serial=$3 i out text bad=""
	CLIENT_LOG=$HA_LOG
	sleep "$CRL_WAIT" # each replica's updater, within crl-delay
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		if ! out=$(curl -sS --fail --max-time 10 --cacert "$ROOT" -o "$HA_DIR/crl.$i.der" "$url" 2>&1); then
			bad+=" fetch $i: $out;"
			continue
		fi
		if ! text=$(openssl crl -inform DER -in "$HA_DIR/crl.$i.der" -noout -text 2>&1); then
			bad+=" fetch $i: unparsable;"
			continue
		fi
		printf '%s\n' "$text" | sed -n 's/^[[:space:]]*Serial Number:[[:space:]]*//p' |
			while read -r s; do norm_serial "$s"; done | grep -qxF "$serial" || bad+=" fetch $i: not listed;"
	done
	if [ -z "$bad" ]; then
		pass "$label: the CRL lists serial $serial on $HA_REPLICAS consecutive fetches through the balancer"
	else
		fail "$label: the CRL lists serial $serial on $HA_REPLICAS consecutive fetches through the balancer" "$bad"
		return 1
	fi
}

# ha_cdp LEAF prints the CRL distribution point URL of LEAF.
ha_cdp() {
	openssl x509 -noout -ext crlDistributionPoints -in "$1" 2>/dev/null |
		grep -o 'URI:[^[:space:],]*' | head -n1 | sed 's/^URI://'
}

# ha_setup starts Redis, the schema, the replicas and HAProxy.
ha_setup() {
	local ports i dsn deadline ready up f out
	CLIENT_LOG=$HA_LOG
	mkdir -p "$HA_DIR/redis"
	# shellcheck disable=SC2207
	ports=($(ha_free_ports $((2 + 2 * HA_REPLICAS))))
	if [ "${#ports[@]}" -ne $((2 + 2 * HA_REPLICAS)) ]; then
		fail "HA: pick free loopback ports" "${ports[*]}"
		return 1
	fi
	HA_LBPORT=${ports[0]}
	HA_RPORT=${ports[1]}
	HA_PORTS=() HA_APORTS=()
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		HA_PORTS[i]=${ports[2 * i]}
		HA_APORTS[i]=${ports[2 * i + 1]}
	done
	HA_URL=https://127.0.0.1:$HA_LBPORT
	echo "ports: haproxy=$HA_LBPORT redis=$HA_RPORT replicas=${HA_PORTS[*]} admin=${HA_APORTS[*]}" >>"$HA_LOG"

	# Redis, private to this flow.
	ha_start "$LOGS/ha-redis.log" redis-server --port "$HA_RPORT" --bind 127.0.0.1 \
		--save "" --appendonly no --dir "$HA_DIR/redis"
	HA_REDIS_PID=$HA_PID
	ready=0
	for ((i = 0; i < 50; i++)); do
		kill -0 "$HA_REDIS_PID" 2>/dev/null || break
		if [ "$(ha_redis PING 2>/dev/null)" = "+PONG" ]; then
			ready=1
			break
		fi
		sleep 0.2
	done
	if [ "$ready" != 1 ]; then
		fail "HA: redis-server answers on 127.0.0.1:$HA_RPORT" "$(tail -n 20 "$LOGS/ha-redis.log")"
		return 1
	fi
	pass "HA: a private redis-server answers on 127.0.0.1:$HA_RPORT (PID $HA_REDIS_PID)"

	# The schema, fresh.
	HA_SCHEMA=weir_ha_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	if ! ha_psql "CREATE SCHEMA $HA_SCHEMA" >/dev/null; then
		HA_SCHEMA=""
		fail "HA: create a PostgreSQL schema" "see $HA_LOG"
		return 1
	fi
	dsn=$(pg_dsn "$HA_SCHEMA")
	pass "HA: fresh PostgreSQL schema $HA_SCHEMA"

	# Three data directories with the run's CA and admin token; one
	# configuration but for the listeners and the data directory.
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		mkdir -p "$HA_DIR/r$i"
		chmod 0700 "$HA_DIR/r$i"
		cp -a "$DATA/ca" "$DATA/root.pem" "$DATA/admin-token" "$HA_DIR/r$i/"
		cat >"$HA_DIR/weir-$i.yaml" <<EOF
data-dir: $HA_DIR/r$i
server:
  listen: "127.0.0.1:${HA_PORTS[i]}"
  external-url: "$HA_URL"
  # The CRLs through the balancer's HTTPS, as before the plain-HTTP
  # listener (its default port would be taken three times here).
  http: { listen: "" }
ca:
  crl-interval: 1h
  crl-delay: 1s
challenges:
  http-01: { port: $HPORT }
  tls-alpn-01: { port: $TPORT }
  dns-resolver: "127.0.0.1:$DPORT"
storage:
  driver: postgres
  dsn: "$dsn"
# The clients all run on this host, and HAProxy connects from it too.
rate-limiting:
  backend: redis
  redis: { addrs: ["127.0.0.1:$HA_RPORT"] }
  on-backend-error: deny
  whitelist: ["127.0.0.1"]
acme:
  nonces: { backend: auto }
admin:
  listen: "127.0.0.1:${HA_APORTS[i]}"
log:
  level: info
EOF
	done
	for f in ca/root.pem ca/intermediate.pem ca/intermediate-key.pem; do
		if ! cmp -s "$DATA/$f" "$HA_DIR/r$HA_REPLICAS/$f"; then
			fail "HA: the replicas hold the run's CA files" "$f differs"
			return 1
		fi
	done

	# All three at once: the migration runs once, the others wait for it.
	HA_WEIR_PIDS=()
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		ha_start "$LOGS/ha-weir-$i.log" "$BIN/weir" serve -config "$HA_DIR/weir-$i.yaml"
		HA_WEIR_PIDS[i]=$HA_PID
	done
	deadline=$((SECONDS + 40))
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		ready=0
		while ((SECONDS < deadline)); do
			kill -0 "${HA_WEIR_PIDS[i]}" 2>/dev/null || break
			if curl -s --fail --max-time 2 --cacert "$ROOT" -o /dev/null "https://127.0.0.1:${HA_PORTS[i]}/readyz"; then
				ready=1
				break
			fi
			sleep 0.25
		done
		if [ "$ready" != 1 ]; then
			fail "HA: weir replica $i is ready on 127.0.0.1:${HA_PORTS[i]}" "$(tail -n 20 "$LOGS/ha-weir-$i.log")"
			return 1
		fi
	done
	pass "HA: $HA_REPLICAS weir replicas ready on 127.0.0.1:${HA_PORTS[*]} (PIDs ${HA_WEIR_PIDS[*]}), one schema, one Redis"
	if [ "$(ha_psql "SELECT count(*) FROM $HA_SCHEMA.schema_migrations")" = "$(ls migrations/postgres/*.sql | wc -l)" ]; then
		pass "HA: the schema was migrated once ($(ls migrations/postgres/*.sql | wc -l) migrations recorded)"
	else
		fail "HA: the schema was migrated once" "$(ha_psql "SELECT version, name FROM $HA_SCHEMA.schema_migrations")"
		return 1
	fi

	# HAProxy: TLS passes through to the replicas; /readyz over TLS is the
	# health check.
	{
		cat <<EOF
global
	stats socket $HA_DIR/haproxy.sock mode 600 level user
	log stdout format short local0 info

defaults
	mode tcp
	log global
	option tcplog
	timeout connect 5s
	timeout client 2m
	timeout server 2m
	timeout check 5s

frontend acme
	bind 127.0.0.1:$HA_LBPORT
	default_backend weir

backend weir
	balance roundrobin
	option httpchk
	http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
	http-check expect status 200
	default-server check check-ssl verify required ca-file $ROOT inter 1s fall 2 rise 1
EOF
		for ((i = 1; i <= HA_REPLICAS; i++)); do
			printf '\tserver weir%d 127.0.0.1:%d\n' "$i" "${HA_PORTS[i]}"
		done
	} >"$HA_DIR/haproxy.cfg"
	if ! out=$(haproxy -c -f "$HA_DIR/haproxy.cfg" 2>&1); then
		fail "HA: haproxy -c accepts the configuration" "$out"
		return 1
	fi
	ha_start "$LOGS/ha-haproxy.log" haproxy -db -f "$HA_DIR/haproxy.cfg"
	HA_HAPROXY_PID=$HA_PID
	up=""
	deadline=$((SECONDS + 20))
	while ((SECONDS < deadline)); do
		kill -0 "$HA_HAPROXY_PID" 2>/dev/null || break
		up=$(ha_stats 2>/dev/null | awk '$3 == "UP"' | wc -l)
		[ "$up" = "$HA_REPLICAS" ] && break
		sleep 0.25
	done
	if [ "$up" != "$HA_REPLICAS" ]; then
		fail "HA: HAProxy sees the $HA_REPLICAS replicas UP" "$(ha_stats 2>&1)" "$(tail -n 20 "$LOGS/ha-haproxy.log")"
		return 1
	fi
	pass "HA: HAProxy (PID $HA_HAPROXY_PID, $(haproxy -v | head -n1 | awk '{print $3}')) on 127.0.0.1:$HA_LBPORT, mode tcp, roundrobin, /readyz checks: $HA_REPLICAS replicas UP"

	# The directory through the balancer names the balancer.
	if ! out=$(curl -sS --fail --max-time 10 --cacert "$ROOT" "$HA_URL/directory" 2>&1); then
		fail "HA: $HA_URL/directory answers through HAProxy" "$out"
		return 1
	fi
	if ! grep -q "\"newNonce\": *\"$HA_URL/" <<<"$out"; then
		fail "HA: the directory's URLs are on the balancer ($HA_URL)" "$out"
		return 1
	fi
	pass "HA: $HA_URL/directory answers through HAProxy with the balancer's URLs"
}

ha_certbot_flow() {
	local cb=$HA_DIR/certbot log=$LOGS/ha-certbot.log first=$HA_DIR/certbot-first.pem
	local dirs=(--config-dir "$cb/config" --work-dir "$cb/work" --logs-dir "$cb/logs")
	local live=$cb/config/live/ha-a.weir.test
	client "HA certbot: certonly ha-a.weir.test ha-b.weir.test (http-01)" "$log" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot certonly "${dirs[@]}" \
		--server "$HA_URL/directory" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d ha-a.weir.test -d ha-b.weir.test --cert-name ha-a.weir.test \
		--agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
	cp "$live/cert.pem" "$first"
	HA_GOT+=("$(serial_of "$first")")
	check_leaf "HA certbot first" "$live/cert.pem" "$live/chain.pem" ha-a.weir.test ha-b.weir.test || return 1

	client "HA certbot: renew --force-renewal" "$log" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot renew "${dirs[@]}" \
		--cert-name ha-a.weir.test --force-renewal --no-random-sleep-on-renew --non-interactive || return 1
	HA_GOT+=("$(serial_of "$live/cert.pem")")
	check_renewed "HA certbot" "$first" "$live/cert.pem" || return 1
	check_leaf "HA certbot renewed" "$live/cert.pem" "$live/chain.pem" ha-a.weir.test ha-b.weir.test || return 1

	client "HA certbot: revoke --reason keycompromise" "$log" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot revoke "${dirs[@]}" \
		--server "$HA_URL/directory" --cert-path "$live/cert.pem" --reason keycompromise \
		--non-interactive --no-delete-after-revoke || return 1
	HA_REVOKED+=("$(serial_of "$live/cert.pem")")
	local url
	url=$(ha_cdp "$live/cert.pem")
	CLIENT_LOG=""
	case $url in
	"$HA_URL"/*) pass "HA certbot: the CRL distribution point is on the balancer ($url)" ;;
	*)
		fail "HA certbot: the CRL distribution point is on the balancer" "got: $url"
		return 1
		;;
	esac
	check_revoked "HA certbot" "$live/cert.pem" "$live/chain.pem" "$first" "Key Compromise" || return 1
	ha_crl_everywhere "HA certbot" "$url" "$(serial_of "$live/cert.pem")" || return 1
}

ha_lego_flow() {
	local LG_CERTS=$HA_DIR/lego/certificates # lego_check reads it
	local log=$LOGS/ha-lego.log base=_.ha.weir.test first=$HA_DIR/lego-first.pem
	local common=(--server "$HA_URL/directory" --email "$EMAIL" --accept-tos --path "$HA_DIR/lego")
	local dns=(--domains '*.ha.weir.test' --domains ha.weir.test --dns exec
		--dns.resolvers "127.0.0.1:$DPORT" --dns.disable-cp)
	client "HA lego: run *.ha.weir.test ha.weir.test (dns-01)" "$log" \
		"${LG_ENV[@]}" lego "${common[@]}" "${dns[@]}" run || return 1
	lego_check "HA lego first" "$base" '*.ha.weir.test' ha.weir.test || return 1
	cp "$TMP/$base.leaf.pem" "$first"
	HA_GOT+=("$(serial_of "$first")")

	client "HA lego: renew *.ha.weir.test ha.weir.test (dns-01)" "$log" \
		"${LG_ENV[@]}" lego "${common[@]}" "${dns[@]}" renew --days 9999 --no-random-sleep || return 1
	lego_check "HA lego renewed" "$base" '*.ha.weir.test' ha.weir.test || return 1
	HA_GOT+=("$(serial_of "$TMP/$base.leaf.pem")")
	check_renewed "HA lego" "$first" "$TMP/$base.leaf.pem" || return 1

	client "HA lego: revoke *.ha.weir.test ha.weir.test (reason 5, cessationOfOperation)" "$log" \
		"${LG_ENV[@]}" lego "${common[@]}" --domains '*.ha.weir.test' --domains ha.weir.test \
		revoke --keep --reason 5 || return 1
	HA_REVOKED+=("$(serial_of "$TMP/$base.leaf.pem")")
	check_revoked "HA lego" "$TMP/$base.leaf.pem" "$TMP/$base.rest.pem" "$first" "Cessation Of Operation" || return 1
	ha_crl_everywhere "HA lego" "$(ha_cdp "$TMP/$base.leaf.pem")" "$(serial_of "$TMP/$base.leaf.pem")" || return 1
}

# ha_check_shared checks that every replica served clients and that the
# shared stores hold what the clients got.
ha_check_shared() {
	local i stats sessions signed issued=0 n m want got ok=0 sum
	CLIENT_LOG=$HA_LOG

	# HAProxy's sessions per replica.
	stats=$(ha_stats 2>&1)
	echo "haproxy stats (server sessions status):" >>"$HA_LOG"
	printf '%s\n' "$stats" >>"$HA_LOG"
	sessions=""
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		n=$(awk -v s="weir$i" '$1 == s { print $2 }' <<<"$stats")
		sessions+="${sessions:+, }weir$i ${n:-?}"
		if [ -z "$n" ] || [ "$n" -lt 1 ]; then
			ok=1
		fi
	done
	if [ "$ok" = 0 ]; then
		pass "HA: HAProxy sent sessions to every replica ($sessions)"
	else
		fail "HA: HAProxy sent sessions to every replica" "$sessions" "$stats"
		return 1
	fi

	# Each replica's own count of the signed ACME requests it answered
	# (everything but the directory, new-nonce and the CRL), and of the
	# certificates it issued.
	signed=""
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		if ! ha_metrics "$i" >"$HA_DIR/metrics.$i" 2>>"$HA_LOG"; then
			fail "HA: replica $i's /metrics" "see $HA_LOG"
			return 1
		fi
		n=$(ha_metric_sum "$HA_DIR/metrics.$i" weir_http_requests_total)
		m=$(ha_metric_sum "$HA_DIR/metrics.$i" weir_http_requests_total 'endpoint="(new-account|new-order|orders|order|authz|challenge|finalize|certificate|revoke-cert|account|key-change|quota)"')
		issued=$((issued + $(ha_metric_sum "$HA_DIR/metrics.$i" weir_certificates_issued_total)))
		signed+="${signed:+, }weir$i $m of $n"
		if [ "$m" -lt 1 ]; then
			ok=1
		fi
	done
	grep -H '^weir_http_requests_total' "$HA_DIR"/metrics.* >>"$HA_LOG" || true
	if [ "$ok" = 0 ]; then
		pass "HA: every replica answered signed ACME requests (of all its requests: $signed)"
	else
		fail "HA: every replica answered signed ACME requests" "$signed" "$(grep -h '^weir_http_requests_total' "$HA_DIR"/metrics.*)"
		ok=1
	fi

	# Each client's account, created on one replica, was used on others
	# (every client command is a new connection, so round robin moves each
	# of them to the next replica).
	got=$(ha_accounts_across "$LOGS"/ha-weir-*.log)
	printf 'accounts (id, replicas that answered its signed requests):\n%s\n' "$got" >>"$HA_LOG"
	n=$(awk '$2 >= 2' <<<"$got" | grep -c . || true)
	m=$(awk 'NF == 2 { printf "%saccount %s on %s", sep, $1, $2; sep = ", " }' <<<"$got")
	if [ "$n" = 2 ] && [ "$(grep -c . <<<"$got")" = 2 ]; then
		pass "HA: certbot's and lego's accounts, each created on one replica, signed requests on others ($m of $HA_REPLICAS replicas)"
	else
		fail "HA: certbot's and lego's accounts, each created on one replica, signed requests on others" "${m:-no account created}"
		ok=1
	fi

	# The schema holds exactly the clients' certificates.
	want=$(printf '%s\n' "${HA_GOT[@]}" | sort)
	got=$(ha_psql "SELECT serial FROM $HA_SCHEMA.certificates" | while read -r s; do norm_serial "$s"; done | sort)
	n=${#HA_GOT[@]}
	if [ "$got" = "$want" ] && [ "$n" = 4 ]; then
		pass "HA: PostgreSQL holds exactly the $n certificates certbot and lego got (by serial)"
	else
		fail "HA: PostgreSQL holds exactly the certificates certbot and lego got" "clients: $(echo $want)" "schema:  $(echo $got)"
		ok=1
	fi
	want=$(printf '%s\n' "${HA_REVOKED[@]}" | sort)
	got=$(ha_psql "SELECT serial FROM $HA_SCHEMA.certificates WHERE revoked_at IS NOT NULL" | while read -r s; do norm_serial "$s"; done | sort)
	if [ "$got" = "$want" ] && [ "${#HA_REVOKED[@]}" = 2 ]; then
		pass "HA: PostgreSQL marks exactly the ${#HA_REVOKED[@]} revoked certificates revoked"
	else
		fail "HA: PostgreSQL marks exactly the revoked certificates revoked" "clients: $(echo $want)" "schema:  $(echo $got)"
		ok=1
	fi
	if [ "$issued" = "$n" ]; then
		pass "HA: the replicas' issued counters add up to $issued"
	else
		fail "HA: the replicas' issued counters add up to the certificates" "sum of weir_certificates_issued_total: $issued, certificates: $n"
		ok=1
	fi

	# The private Redis holds the limiter's buckets and the nonces.
	sum=$(ha_redis DBSIZE 2>&1)
	if [[ $sum =~ ^:([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
		pass "HA: the shared Redis holds ${BASH_REMATCH[1]} keys (limiter and nonces)"
	else
		fail "HA: the shared Redis holds the limiter's and the nonces' keys" "DBSIZE: $sum"
		ok=1
	fi
	return "$ok"
}

ha_flow() {
	local missing="" failed_before=$FAILED rc=0 i f
	CLIENT_LOG=$HA_LOG
	pg_ready || missing+=" PostgreSQL(WEIR_TEST_POSTGRES_DSN+psql)"
	command -v haproxy >/dev/null 2>&1 || missing+=" haproxy"
	command -v redis-server >/dev/null 2>&1 || missing+=" redis-server"
	if [ -n "$missing" ]; then
		if [ "${CI:-}" = "true" ]; then
			fail "HA: PostgreSQL, haproxy and redis-server are available" "missing:$missing"
			return 1
		fi
		echo "HA: skipped (missing:$missing; set WEIR_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable, apt-get install haproxy redis-server postgresql-client)"
		return 0
	fi
	HA_GOT=() HA_REVOKED=()
	if ha_setup; then
		ha_certbot_flow || {
			echo "HA certbot: remaining steps skipped after the failure above"
			rc=1
		}
		ha_lego_flow || {
			echo "HA lego: remaining steps skipped after the failure above"
			rc=1
		}
		ha_check_shared || rc=1
	else
		rc=1
	fi
	for ((i = 1; i <= HA_REPLICAS; i++)); do
		if grep -Eq 'level=ERROR|panic:|DATA RACE' "$LOGS/ha-weir-$i.log" 2>/dev/null; then
			echo "note: weir replica $i logged errors:"
			grep -E 'level=ERROR|panic:|DATA RACE' "$LOGS/ha-weir-$i.log" | tail -n 10 | sed 's/^/      /'
		fi
	done
	if [ "$FAILED" -gt "$failed_before" ]; then
		for f in "$LOGS"/ha-weir-*.log "$LOGS/ha-haproxy.log"; do
			[ -f "$f" ] || continue
			echo "----- last 15 lines of $(basename "$f") -----"
			tail -n 15 "$f" | sed 's/^/      /'
		done
	fi
	ha_stop
	return "$rc"
}
