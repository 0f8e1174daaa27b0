#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Interoperability test: runs weir on loopback and gets, renews and revokes
# certificates with the stock certbot and lego clients (and dehydrated,
# uacme and Caddy, clients-flow.sh; cert-manager's ACME client,
# certmanager-flow.sh; and the Node.js acme-client, nodeacme-flow.sh), also
# from weirs whose intermediate key is encrypted or in a SoftHSM2 token
# (signers-flow.sh), and with the EAB keys of two tenants (tenants-flow.sh),
# then checks every certificate and the CRL with openssl.
#
# Usage (from anywhere in the repository):
#   bash test/interop/run.sh
# Environment:
#   CI=true   install missing clients with apt-get (needs root)
#   KEEP=1    keep the temporary directory (logs, certificates, data dir)
#
# Everything listens on 127.0.0.1 only. A test DNS server
# (test/interop/dnsserver) answers every name with 127.0.0.1 and serves the
# dns-01 TXT records that lego writes through lego-dns-exec.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"

EMAIL=ops@example.org
CLIENT_TIMEOUT=${WEIR_INTEROP_CLIENT_TIMEOUT:-180} # seconds per client command

log() { printf '==> %s\n' "$*"; }
die() {
	printf 'FATAL: %s\n' "$*" >&2
	exit 1
}

# ---------------------------------------------------------------------------
# Prerequisites.

REQUIRED_CMDS=(certbot lego openssl curl python3 flock timeout)
# missing_of CMD... prints the commands that are not installed.
missing_of() {
	local c out=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || out+=("$c")
	done
	echo "${out[*]:-}"
}
missing_cmds() { missing_of "${REQUIRED_CMDS[@]}"; }

missing=$(missing_cmds)
if [ -n "$missing" ]; then
	if [ "${CI:-}" = "true" ]; then
		log "missing: $missing; installing with apt-get"
		apt-get update
		DEBIAN_FRONTEND=noninteractive apt-get install -y certbot lego openssl curl python3 util-linux coreutils
		missing=$(missing_cmds)
		[ -z "$missing" ] || die "still missing after apt-get install: $missing"
	else
		cat >&2 <<EOF
FATAL: missing commands: $missing
Install them first, for example on Debian/Ubuntu:
  sudo apt-get update && sudo apt-get install -y certbot lego openssl curl python3
(or run this script with CI=true as root to install them automatically)
EOF
		exit 1
	fi
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH"

# The clients of clients-flow.sh (dehydrated, uacme, Caddy): installed under
# CI; elsewhere their flows are skipped with a message when missing.
# shellcheck source=test/interop/clients-flow.sh
. test/interop/clients-flow.sh
missing=$(clients_missing)
if [ -n "$missing" ] && [ "${CI:-}" = "true" ]; then
	log "missing: $missing; installing with apt-get"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y dehydrated uacme caddy util-linux ca-certificates
	missing=$(clients_missing)
	[ -z "$missing" ] || die "still missing after apt-get install: $missing"
fi

log "certbot: $(certbot --version 2>&1 | head -n1)"
log "lego: $(lego --version 2>&1 | head -n1)"
log "openssl: $(openssl version)"
if [ -z "$(clients_missing)" ]; then
	# awk reads all of each output, so no writer dies of SIGPIPE (pipefail).
	log "dehydrated: $(dehydrated --version 2>&1 | awk 'tolower($0) ~ /version/ && !n++'); $(uacme --version 2>&1 | awk 'NR == 1'); caddy: $(caddy version 2>&1 | awk 'NR == 1')"
fi

# ---------------------------------------------------------------------------
# Temporary directory, processes and cleanup.

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weir-interop.XXXXXX")
PIDS=()
# stop_pid PID [SECONDS] stops a process this script started: SIGTERM, up
# to SECONDS (default 5) for it to exit, then SIGKILL; and reaps it. It
# returns 0, or 1 if the process had to be killed.
stop_pid() {
	local i rc=0
	kill -TERM "$1" 2>/dev/null || true
	for ((i = 0; i < ${2:-5} * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1" 2>/dev/null || true
		rc=1
	fi
	wait "$1" 2>/dev/null || true
	return "$rc"
}
cleanup() {
	local rc=$? pid
	# All are told to stop first, so that their 5 s run side by side.
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		stop_pid "$pid" || true
	done
	# The PostgreSQL schemas of migrate-flow.sh and ha-flow.sh, once their
	# weir processes are stopped.
	if declare -F migrate_cleanup >/dev/null; then
		migrate_cleanup || true
	fi
	if declare -F ha_cleanup >/dev/null; then
		ha_cleanup || true
	fi
	if [ "${KEEP:-}" = "1" ]; then
		echo "KEEP=1: kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

BIN=$TMP/bin
DATA=$TMP/data
TXT_DIR=$TMP/txt
LOGS=$TMP/logs
mkdir -p "$BIN" "$DATA" "$TXT_DIR" "$LOGS"
WEIR_LOG=$LOGS/weir.log
DNS_LOG=$LOGS/dnsserver.log

log "building weir and dnsserver into $BIN"
go build -o "$BIN/weir" ./cmd/weir
go build -o "$BIN/dnsserver" ./test/interop/dnsserver
# The exec hook is copied so that a lost executable bit cannot break it.
install -m 0755 test/interop/lego-dns-exec.sh "$BIN/lego-dns-exec.sh"
install -m 0755 test/interop/uacme-hook.sh "$BIN/uacme-hook.sh"

# Six distinct free loopback ports; the DNS port is free for TCP and UDP.
read -r WPORT DPORT HPORT TPORT APORT PPORT < <(python3 - <<'EOF'
import socket
socks, ports = [], []
for _ in range(200):
    if len(ports) == 6:
        break
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("127.0.0.1", 0))
    p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", p))
    except OSError:
        t.close(); u.close()
        continue
    socks += [t, u]
    ports.append(p)
if len(ports) != 6:
    raise SystemExit("could not find 6 free ports")
print(*ports)
EOF
)
[ -n "${PPORT:-}" ] || die "could not pick free ports"
log "ports: weir=$WPORT admin=$APORT plain-http=$PPORT dns=$DPORT http-01=$HPORT tls-alpn-01=$TPORT"

DIRECTORY=https://127.0.0.1:$WPORT/directory
ROOT=$DATA/root.pem

# weir_yaml DATA_DIR WPORT APORT CA_BODY [PPORT] prints a weir config that
# listens on WPORT (admin APORT; the plain-HTTP listener of the CRLs and
# CA certificates on PPORT, off without it) and validates through this
# run's DNS server and http-01 and tls-alpn-01 ports; CA_BODY is the body
# of its ca: block.
weir_yaml() {
	cat <<EOF
data-dir: $1
server:
  listen: "127.0.0.1:$2"
  http: { listen: "${5:+127.0.0.1:$5}" }
ca:
$4
challenges:
  http-01: { port: $HPORT }
  tls-alpn-01: { port: $TPORT }
  dns-resolver: "127.0.0.1:$DPORT"
# The limits stay at their defaults; the clients all run on this host, so
# its address bypasses the IP-keyed layers (global, account-creation) as a
# shared proxy address would in production.
rate-limiting:
  whitelist: ["127.0.0.1"]
admin:
  listen: "127.0.0.1:$3"
log:
  level: info
EOF
}

# A revocation reaches the CRL within crl-delay (the background updater);
# check_revoked waits CRL_WAIT seconds, the delay and a margin, first.
CRL_WAIT=2
weir_yaml "$DATA" "$WPORT" "$APORT" "  crl-interval: 1h
  crl-delay: 1s" "$PPORT" >"$TMP/weir.yaml"

# ---------------------------------------------------------------------------
# Results.

PASSED=0
FAILED=0
CLIENT_LOG=""

pass() {
	PASSED=$((PASSED + 1))
	printf 'PASS: %s\n' "$1"
}

# fail NAME [DETAIL...] records a failure and shows the logs.
fail() {
	FAILED=$((FAILED + 1))
	printf 'FAIL: %s\n' "$1"
	shift
	if [ "$#" -gt 0 ]; then
		printf '      %s\n' "$@"
	fi
	if [ -n "$CLIENT_LOG" ] && [ -f "$CLIENT_LOG" ]; then
		echo "----- last 40 lines of $(basename "$CLIENT_LOG") -----"
		tail -n 40 "$CLIENT_LOG" | sed 's/^/      /'
	fi
	echo "----- last 30 lines of weir.log -----"
	tail -n 30 "$WEIR_LOG" 2>/dev/null | sed 's/^/      /' || true
	echo "-----"
}

# client NAME LOGFILE CMD... runs a client command (bounded by
# CLIENT_TIMEOUT) with its output appended to LOGFILE and records the step.
client() {
	local name=$1 logfile=$2 rc=0
	shift 2
	CLIENT_LOG=$logfile
	{
		echo
		echo "### $name"
		echo "### $*"
	} >>"$logfile"
	timeout -k 10 "$CLIENT_TIMEOUT" "$@" >>"$logfile" 2>&1 </dev/null || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name"
		return 0
	fi
	if [ "$rc" -eq 124 ]; then
		fail "$name" "timed out after ${CLIENT_TIMEOUT}s"
	else
		fail "$name" "exit status $rc"
	fi
	return 1
}

# ---------------------------------------------------------------------------
# Certificate helpers.

# split_chain FILE OUTPREFIX writes OUTPREFIX.leaf.pem (the first certificate)
# and OUTPREFIX.rest.pem (the others) and prints how many certificates there
# were.
split_chain() {
	awk -v leaf="$2.leaf.pem" -v rest="$2.rest.pem" '
		/-----BEGIN CERTIFICATE-----/ { n++; on = 1 }
		on { print > (n == 1 ? leaf : rest) }
		/-----END CERTIFICATE-----/ { on = 0 }
		END { print n + 0 }
	' "$1"
}

# norm_serial turns "serial=00:AB:cd" or "00ABCD" into "ABCD".
norm_serial() {
	local s=${1#serial=}
	s=$(printf '%s' "$s" | tr -d ':[:space:]' | tr '[:lower:]' '[:upper:]')
	s=$(printf '%s' "$s" | sed 's/^0*//')
	printf '%s\n' "${s:-0}"
}

serial_of() { norm_serial "$(openssl x509 -noout -serial -in "$1")"; }

fingerprint_of() { openssl x509 -noout -fingerprint -sha256 -in "$1" | sed 's/.*=//'; }

# port_free PORT reports whether nothing listens on 127.0.0.1:PORT (with
# SO_REUSEADDR, as servers bind, so connections in TIME_WAIT do not count).
port_free() {
	python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

# check_leaf LABEL LEAF CHAIN NAME... checks the SANs of LEAF and that it
# verifies to the weir root through the intermediates in CHAIN (a file whose
# certificates, if it holds the leaf first, are split off).
check_leaf() {
	local label=$1 leaf=$2 chain=$3 ok=0
	shift 3
	local want got sans
	CLIENT_LOG=""
	want=$(printf 'DNS:%s\n' "$@" | sort)
	if ! sans=$(openssl x509 -noout -ext subjectAltName -in "$leaf" 2>&1); then
		fail "$label: SANs are exactly $*" "openssl x509 failed on $leaf: $sans"
		ok=1
	else
		got=$(printf '%s\n' "$sans" | tail -n +2 | tr ',' '\n' | sed 's/^[[:space:]]*//;s/[[:space:]]*$//' | grep -v '^$' | sort)
		if [ "$got" = "$want" ]; then
			pass "$label: SANs are exactly $*"
		else
			fail "$label: SANs are exactly $*" "want: $(echo $want)" "got:  $(echo $got)"
			ok=1
		fi
	fi
	local out
	if out=$(openssl verify -CAfile "$ROOT" -untrusted "$chain" -purpose sslserver "$leaf" 2>&1); then
		pass "$label: openssl verify against the weir root"
	else
		fail "$label: openssl verify against the weir root" "$out"
		ok=1
	fi
	return "$ok"
}

# check_revoked LABEL LEAF INTERMEDIATES NOT_REVOKED_LEAF REASON fetches the
# CRL named in LEAF's CRL distribution points, verifies its signature and
# checks that it lists LEAF's serial (and not NOT_REVOKED_LEAF's) with the
# reason code REASON as openssl prints it ("Key Compromise"); REASON "none"
# means the entry must have no reason code (RFC 5280: unspecified is omitted).
check_revoked() {
	local label=$1 leaf=$2 inter=$3 other=$4 reason=$5 ok=0
	local dp url crl=$TMP/crl.$RANDOM.der out serial
	CLIENT_LOG=""
	dp=$(openssl x509 -noout -ext crlDistributionPoints -in "$leaf" 2>&1) || true
	url=$(printf '%s\n' "$dp" | grep -o 'URI:[^[:space:],]*' | head -n1 | sed 's/^URI://')
	if [ -z "$url" ]; then
		fail "$label: leaf names a CRL distribution point" "$dp"
		return 1
	fi
	# Plain HTTP from the plain-HTTP listener (the default), or the ACME
	# listener's HTTPS where that listener is off (the HA replicas).
	case $url in
	http://127.0.0.1:* | http://localhost:* | http://\[::1\]:* | https://127.0.0.1:* | https://localhost:* | https://\[::1\]:*) ;;
	*)
		fail "$label: CRL distribution point is on loopback" "$url"
		return 1
		;;
	esac
	sleep "$CRL_WAIT"
	if ! out=$(curl -sS --fail --max-time 10 --cacert "$ROOT" -o "$crl" "$url" 2>&1); then
		fail "$label: fetch CRL $url" "$out"
		return 1
	fi
	pass "$label: fetch CRL $url"

	cat "$inter" "$ROOT" >"$crl.chain.pem"
	if out=$(openssl crl -inform DER -in "$crl" -CAfile "$crl.chain.pem" -noout 2>&1) && grep -q 'verify OK' <<<"$out"; then
		pass "$label: CRL signature verifies"
	else
		fail "$label: CRL signature verifies" "$out"
		ok=1
	fi

	local text listed
	if ! text=$(openssl crl -inform DER -in "$crl" -noout -text 2>&1); then
		fail "$label: parse CRL" "$text"
		return 1
	fi
	listed=$(printf '%s\n' "$text" | sed -n 's/^[[:space:]]*Serial Number:[[:space:]]*//p' |
		while read -r s; do norm_serial "$s"; done)
	serial=$(serial_of "$leaf")
	if grep -qxF "$serial" <<<"$listed"; then
		pass "$label: CRL lists revoked serial $serial"
	else
		fail "$label: CRL lists revoked serial $serial" "CRL serials: $(echo $listed)" "$(printf '%s\n' "$text" | head -n 30)"
		return 1
	fi
	# The reason code of that entry: the line after "CRL Reason Code:" within
	# the entry's block.
	local got
	got=$(printf '%s\n' "$text" | awk -v want="$serial" '
		/^[[:space:]]*Serial Number:/ {
			s = $0; sub(/.*Serial Number:[[:space:]]*/, "", s); gsub(/[:[:space:]]/, "", s)
			s = toupper(s); sub(/^0+/, "", s); cur = (s == want); next
		}
		/^[[:space:]]*Signature Algorithm:/ { cur = 0 }
		cur && grab { r = $0; gsub(/^[[:space:]]+|[[:space:]]+$/, "", r); print r; exit }
		cur && /CRL Reason Code:/ { grab = 1 }
	')
	if [ "${got:-none}" = "$reason" ]; then
		pass "$label: CRL entry reason is $reason"
	else
		fail "$label: CRL entry reason is $reason" "got: ${got:-none}"
		ok=1
	fi
	serial=$(serial_of "$other")
	if grep -qxF "$serial" <<<"$listed"; then
		fail "$label: CRL does not list unrevoked serial $serial" "CRL serials: $(echo $listed)"
		ok=1
	else
		pass "$label: CRL does not list unrevoked serial $serial"
	fi
	return "$ok"
}

# check_renewed LABEL OLD NEW checks that NEW is a different certificate.
check_renewed() {
	CLIENT_LOG=""
	if [ "$(fingerprint_of "$2")" != "$(fingerprint_of "$3")" ]; then
		pass "$1: renewal produced a new certificate (serial $(serial_of "$3"))"
	else
		fail "$1: renewal produced a new certificate" "the certificate did not change (serial $(serial_of "$3"))"
		return 1
	fi
}

# ---------------------------------------------------------------------------
# Servers.

log "starting dnsserver on 127.0.0.1:$DPORT"
"$BIN/dnsserver" -listen "127.0.0.1:$DPORT" -txt-dir "$TXT_DIR" -a 127.0.0.1 >"$DNS_LOG" 2>&1 &
PIDS+=($!)
DNS_PID=$!

log "starting weir on 127.0.0.1:$WPORT"
"$BIN/weir" serve -config "$TMP/weir.yaml" >"$WEIR_LOG" 2>&1 &
PIDS+=($!)
WEIR_PID=$!

ready=0
deadline=$((SECONDS + 20))
for ((i = 0; i < 80 && SECONDS < deadline; i++)); do
	if ! kill -0 "$WEIR_PID" 2>/dev/null; then
		break
	fi
	if [ -s "$ROOT" ] && curl -s --fail --max-time 2 --cacert "$ROOT" -o /dev/null "$DIRECTORY"; then
		ready=1
		break
	fi
	sleep 0.25
done
if ! kill -0 "$DNS_PID" 2>/dev/null; then
	echo "----- dnsserver.log -----"
	cat "$DNS_LOG"
	die "dnsserver exited"
fi
if [ "$ready" != 1 ]; then
	echo "----- weir.log -----"
	cat "$WEIR_LOG"
	die "weir did not serve $DIRECTORY within 20s"
fi
pass "weir serves $DIRECTORY"

# ---------------------------------------------------------------------------
# certbot: http-01 (standalone), two names; renew; revoke.

CB=$TMP/certbot
CB_LOG=$LOGS/certbot.log
CB_DIRS=(--config-dir "$CB/config" --work-dir "$CB/work" --logs-dir "$CB/logs")
CB_LIVE=$CB/config/live/a.weir.test

certbot_flow() {
	local first=$TMP/certbot-first.pem
	client "certbot: certonly a.weir.test b.weir.test (http-01)" "$CB_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot certonly "${CB_DIRS[@]}" \
		--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
		-d a.weir.test -d b.weir.test --cert-name a.weir.test \
		--agree-tos -m "$EMAIL" --non-interactive --no-eff-email || return 1
	cp "$CB_LIVE/cert.pem" "$first"
	check_leaf "certbot first" "$CB_LIVE/cert.pem" "$CB_LIVE/chain.pem" a.weir.test b.weir.test || return 1

	client "certbot: renew --force-renewal" "$CB_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot renew "${CB_DIRS[@]}" \
		--cert-name a.weir.test --force-renewal --no-random-sleep-on-renew --non-interactive || return 1
	check_renewed "certbot" "$first" "$CB_LIVE/cert.pem" || return 1
	check_leaf "certbot renewed" "$CB_LIVE/cert.pem" "$CB_LIVE/chain.pem" a.weir.test b.weir.test || return 1

	client "certbot: revoke --reason keycompromise" "$CB_LOG" \
		env REQUESTS_CA_BUNDLE="$ROOT" certbot revoke "${CB_DIRS[@]}" \
		--server "$DIRECTORY" --cert-path "$CB_LIVE/cert.pem" --reason keycompromise \
		--non-interactive --no-delete-after-revoke || return 1
	check_revoked "certbot" "$CB_LIVE/cert.pem" "$CB_LIVE/chain.pem" "$first" "Key Compromise" || return 1
}

log "certbot"
if ! certbot_flow; then
	echo "certbot: remaining certbot steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# The operator CLI on certbot's account: status, explain, reset.

# shellcheck source=test/interop/admin-flow.sh
. test/interop/admin-flow.sh
log "operator CLI"
if ! admin_flow; then
	echo "operator CLI: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# External Account Binding: certbot and lego register with weir eab keys.

# shellcheck source=test/interop/eab-flow.sh
. test/interop/eab-flow.sh
log "External Account Binding"
if ! eab_flow; then
	echo "External Account Binding: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# Tenants: certbot and lego with the EAB keys of two tenants get their own
# names (some under a delegated zone, with no challenge) and are refused
# the other's.

# shellcheck source=test/interop/tenants-flow.sh
. test/interop/tenants-flow.sh
log "tenants"
if ! tenants_flow; then
	echo "tenants: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# lego: dns-01 (wildcard + base name) and tls-alpn-01; renew; revoke.

LG=$TMP/lego
LG_LOG=$LOGS/lego.log
LG_CERTS=$LG/certificates
LG_COMMON=(--server "$DIRECTORY" --email "$EMAIL" --accept-tos --path "$LG")
LG_DNS=(--domains '*.w.weir.test' --domains w.weir.test --dns exec
	--dns.resolvers "127.0.0.1:$DPORT" --dns.disable-cp)
LG_TLS=(--domains alpn.weir.test --tls --tls.port "127.0.0.1:$TPORT")
LG_ENV=(env LEGO_CA_CERTIFICATES="$ROOT" EXEC_PATH="$BIN/lego-dns-exec.sh"
	EXEC_PROPAGATION_TIMEOUT=20 EXEC_POLLING_INTERVAL=1 EXEC_SEQUENCE_INTERVAL=1 WEIR_INTEROP_TXT_DIR="$TXT_DIR")

# lego_check LABEL BASENAME NAME... checks certificates/BASENAME.crt (leaf
# followed by the issuer chain).
lego_check() {
	local label=$1 base=$2 n
	shift 2
	n=$(split_chain "$LG_CERTS/$base.crt" "$TMP/$base")
	if [ "$n" -lt 2 ]; then
		CLIENT_LOG=""
		fail "$label: bundle holds the leaf and its chain" "$LG_CERTS/$base.crt holds $n certificate(s)"
		return 1
	fi
	check_leaf "$label" "$TMP/$base.leaf.pem" "$TMP/$base.rest.pem" "$@"
}

lego_dns_flow() {
	local base=_.w.weir.test first=$TMP/lego-dns-first.pem
	client "lego: run *.w.weir.test w.weir.test (dns-01)" "$LG_LOG" \
		"${LG_ENV[@]}" lego "${LG_COMMON[@]}" "${LG_DNS[@]}" run || return 1
	lego_check "lego dns-01 first" "$base" '*.w.weir.test' w.weir.test || return 1
	cp "$TMP/$base.leaf.pem" "$first"

	client "lego: renew *.w.weir.test w.weir.test (dns-01)" "$LG_LOG" \
		"${LG_ENV[@]}" lego "${LG_COMMON[@]}" "${LG_DNS[@]}" renew --days 9999 --no-random-sleep || return 1
	lego_check "lego dns-01 renewed" "$base" '*.w.weir.test' w.weir.test || return 1
	check_renewed "lego dns-01" "$first" "$TMP/$base.leaf.pem" || return 1

	client "lego: revoke *.w.weir.test w.weir.test (reason 4, superseded)" "$LG_LOG" \
		"${LG_ENV[@]}" lego "${LG_COMMON[@]}" --domains '*.w.weir.test' --domains w.weir.test \
		revoke --keep --reason 4 || return 1
	check_revoked "lego dns-01" "$TMP/$base.leaf.pem" "$TMP/$base.rest.pem" "$first" "Superseded" || return 1
}

lego_tls_flow() {
	local base=alpn.weir.test first=$TMP/lego-tls-first.pem
	client "lego: run alpn.weir.test (tls-alpn-01)" "$LG_LOG" \
		"${LG_ENV[@]}" lego "${LG_COMMON[@]}" "${LG_TLS[@]}" run || return 1
	lego_check "lego tls-alpn-01 first" "$base" alpn.weir.test || return 1
	cp "$TMP/$base.leaf.pem" "$first"

	client "lego: renew alpn.weir.test (tls-alpn-01)" "$LG_LOG" \
		"${LG_ENV[@]}" lego "${LG_COMMON[@]}" "${LG_TLS[@]}" renew --days 9999 --no-random-sleep || return 1
	lego_check "lego tls-alpn-01 renewed" "$base" alpn.weir.test || return 1
	check_renewed "lego tls-alpn-01" "$first" "$TMP/$base.leaf.pem" || return 1

	client "lego: revoke alpn.weir.test (reason 0, unspecified)" "$LG_LOG" \
		"${LG_ENV[@]}" lego "${LG_COMMON[@]}" --domains alpn.weir.test revoke --keep || return 1
	check_revoked "lego tls-alpn-01" "$TMP/$base.leaf.pem" "$TMP/$base.rest.pem" "$first" none || return 1
}

log "lego dns-01"
if ! lego_dns_flow; then
	echo "lego dns-01: remaining lego dns-01 steps skipped after the failure above"
fi
log "lego tls-alpn-01"
if ! lego_tls_flow; then
	echo "lego tls-alpn-01: remaining lego tls-alpn-01 steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# dehydrated, uacme and Caddy (clients-flow.sh, sourced above).

if [ -n "$(clients_missing)" ]; then
	echo "dehydrated, uacme, Caddy: skipped (missing: $(clients_missing); apt-get install -y dehydrated uacme caddy, or run with CI=true as root)"
else
	# shellcheck source=test/interop/caddy-new.sh
	. test/interop/caddy-new.sh
	# run_flow NAME CMD... runs one flow; a failure ends that flow only.
	run_flow() {
		local name=$1
		shift
		log "$name"
		if ! "$@"; then
			echo "$name: remaining steps skipped after the failure above"
		fi
	}
	run_flow dehydrated dehydrated_flow
	run_flow uacme uacme_flow
	run_flow "caddy (Debian's)" caddy_flow caddy caddy
	run_flow "caddy $CADDY_NEW_VERSION" caddy_new_flow
fi

# ---------------------------------------------------------------------------
# Certificate profiles with a current lego (built from the module proxy at
# a pinned version; Debian's lego 4.9 has no --profile).

# shellcheck source=test/interop/lego-new.sh
. test/interop/lego-new.sh
# shellcheck source=test/interop/profiles-flow.sh
. test/interop/profiles-flow.sh
log "certificate profiles"
if ! profiles_flow; then
	echo "certificate profiles: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# cert-manager's ACME client (certmanager-flow.sh), built from the module
# proxy at the release test/interop/certmanager/go.mod pins.

# shellcheck source=test/interop/certmanager-flow.sh
. test/interop/certmanager-flow.sh
log "cert-manager's ACME client"
if ! certmanager_flow; then
	echo "cert-manager client: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# acme-client, the Node.js ACME client (nodeacme-flow.sh): node and npm are
# installed under CI; elsewhere the flow is skipped when they are missing.

# shellcheck source=test/interop/nodeacme-flow.sh
. test/interop/nodeacme-flow.sh
if [ -n "$(nodeacme_missing)" ] && [ "${CI:-}" = "true" ]; then
	log "missing: $(nodeacme_missing); installing with apt-get"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm
	[ -z "$(nodeacme_missing)" ] || die "still missing after apt-get install: $(nodeacme_missing)"
fi
if [ -n "$(nodeacme_missing)" ]; then
	echo "acme-client: skipped (missing: $(nodeacme_missing); apt-get install -y nodejs npm, or run with CI=true as root)"
else
	log "acme-client (Node.js)"
	if ! nodeacme_flow; then
		echo "acme-client: remaining steps skipped after the failure above"
	fi
fi

# ---------------------------------------------------------------------------
# A new user's first run: `weir serve` with no configuration in an empty
# directory, then the certbot command it prints, run exactly as printed
# (standalone http-01 on port 80, certbot's default directories).


first_run() {
	if [ "$(id -u)" != 0 ] || ! port_free 80 || ! port_free 14000 || ! port_free 14080; then
		if [ "${CI:-}" = "true" ]; then
			fail "first run: needs root and free ports 80, 14000 and 14080 under CI"
		else
			echo "first run: skipped (needs root and free ports 80, 14000 and 14080)"
		fi
		return 0
	fi
	local dir=$TMP/fresh out=$LOGS/fresh.out flog=$LOGS/fresh.log i cmd le_moved=""
	mkdir -p "$dir"
	(cd "$dir" && exec "$BIN/weir" serve) >"$out" 2>"$flog" &
	local fpid=$!
	PIDS+=("$fpid")
	for ((i = 0; i < 200; i++)); do
		grep -q 'certbot certonly' "$out" 2>/dev/null && break
		sleep 0.1
	done
	cmd=$(grep -m1 'certbot certonly' "$out" | sed 's/^ *//')
	if [ -z "$cmd" ]; then
		fail "first run: weir serve prints a certbot command" "$(tail -n 20 "$flog")"
		return 0
	fi
	pass "first run: weir serve created its CA and printed a certbot command"
	for f in root.pem ca/root-key.pem ca/intermediate-key.pem weir.db ratelimit.db; do
		[ -e "$dir/weir-data/$f" ] || fail "first run: weir-data/$f exists"
	done
	if [ "$(stat -c %a "$dir/weir-data/ca/intermediate-key.pem")" = 600 ]; then
		pass "first run: the intermediate key is mode 0600"
	else
		fail "first run: the intermediate key is mode 0600" "mode $(stat -c %a "$dir/weir-data/ca/intermediate-key.pem")"
	fi
	if [ -e /etc/letsencrypt ]; then
		le_moved=$TMP/letsencrypt.saved
		mv /etc/letsencrypt "$le_moved"
	fi
	local ROOT=$dir/weir-data/root.pem # check_leaf verifies against this root
	if client "first run: the printed certbot command, as printed" "$LOGS/fresh-certbot.log" bash -c "$cmd"; then
		check_leaf "first run" /etc/letsencrypt/live/localhost/cert.pem /etc/letsencrypt/live/localhost/chain.pem localhost
	fi
	rm -rf /etc/letsencrypt
	[ -n "$le_moved" ] && mv "$le_moved" /etc/letsencrypt
	kill -TERM "$fpid" 2>/dev/null || true
	return 0
}
# ---------------------------------------------------------------------------
# ARI (RFC 9773) with a current lego: renewalInfo, renew-now, replaces.

# shellcheck source=test/interop/lego-new.sh
. test/interop/lego-new.sh
# shellcheck source=test/interop/ari-flow.sh
. test/interop/ari-flow.sh
log "ARI"
if ! ari_flow; then
	echo "ARI: remaining steps skipped after the failure above"
fi

# PostgreSQL helpers of the flows that need WEIR_TEST_POSTGRES_DSN
# (migrate-flow.sh, ha-flow.sh).

# pg_ready reports whether PostgreSQL answers as WEIR_TEST_POSTGRES_DSN
# through psql.
pg_ready() {
	[ -n "${WEIR_TEST_POSTGRES_DSN:-}" ] && command -v psql >/dev/null 2>&1 &&
		timeout 10 psql "$WEIR_TEST_POSTGRES_DSN" -Atqc 'select 1' >/dev/null 2>&1
}

# pg_psql LOG SQL runs one statement on WEIR_TEST_POSTGRES_DSN, prints its
# result unaligned and appends psql's errors to LOG.
pg_psql() {
	timeout 30 psql "$WEIR_TEST_POSTGRES_DSN" -v ON_ERROR_STOP=1 -Atqc "$2" 2>>"$1"
}

# pg_dsn SCHEMA prints WEIR_TEST_POSTGRES_DSN with search_path SCHEMA.
pg_dsn() {
	case $WEIR_TEST_POSTGRES_DSN in
	postgres://*\?* | postgresql://*\?*) printf '%s&search_path=%s\n' "$WEIR_TEST_POSTGRES_DSN" "$1" ;;
	postgres://* | postgresql://*) printf '%s?search_path=%s\n' "$WEIR_TEST_POSTGRES_DSN" "$1" ;;
	*) printf '%s search_path=%s\n' "$WEIR_TEST_POSTGRES_DSN" "$1" ;;
	esac
}

# pg_drop_schema SCHEMA LOG drops SCHEMA with its tables (kept with
# KEEP=1).
pg_drop_schema() {
	if [ "${KEEP:-}" = "1" ]; then
		echo "KEEP=1: kept PostgreSQL schema $1"
		return 0
	fi
	pg_psql "$2" "DROP SCHEMA IF EXISTS $1 CASCADE" >/dev/null || echo "note: could not drop schema $1"
}

# ---------------------------------------------------------------------------
# Moving to PostgreSQL (weir migrate-storage): certbot renews and revokes a
# certificate issued before the move. Needs WEIR_TEST_POSTGRES_DSN.

# shellcheck source=test/interop/migrate-flow.sh
. test/interop/migrate-flow.sh
log "migrate-storage to PostgreSQL"
if ! migrate_flow; then
	echo "migrate-storage: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# High availability: three weir replicas on one PostgreSQL schema and one
# Redis behind HAProxy (TCP, round robin); certbot and lego issue, renew and
# revoke through it. Needs WEIR_TEST_POSTGRES_DSN, haproxy and redis-server.

# shellcheck source=test/interop/ha-flow.sh
. test/interop/ha-flow.sh
log "three replicas behind HAProxy"
if ! ha_flow; then
	echo "HA: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# Name constraints: a second weir whose generated CA is constrained
# (constraints-flow.sh).

# shellcheck source=test/interop/constraints-flow.sh
. test/interop/constraints-flow.sh
log "name constraints"
if ! nc_flow; then
	echo "name constraints: remaining steps skipped after the failure above"
fi

# ---------------------------------------------------------------------------
# Signers: weirs whose intermediate key is an encrypted file and in a
# SoftHSM2 token (the -tags pkcs11 build); certbot and lego on each
# (signers-flow.sh).

# shellcheck source=test/interop/signers-flow.sh
. test/interop/signers-flow.sh
log "signers: encrypted key file, SoftHSM2"
if ! signers_flow; then
	echo "signers: remaining steps skipped after the failure above"
fi

log "first run"
first_run

# ---------------------------------------------------------------------------
# Summary.

CLIENT_LOG=""
if ! kill -0 "$WEIR_PID" 2>/dev/null; then
	fail "weir is still running at the end"
fi
if grep -Eq 'level=(ERROR)|panic:|DATA RACE' "$WEIR_LOG"; then
	echo "note: weir logged errors:"
	grep -E 'level=(ERROR)|panic:|DATA RACE' "$WEIR_LOG" | tail -n 20 | sed 's/^/      /'
fi

echo
echo "$PASSED passed, $FAILED failed"
if [ "$FAILED" -ne 0 ]; then
	if [ "${KEEP:-}" = "1" ]; then
		echo "logs: $LOGS"
	else
		echo "rerun with KEEP=1 to keep the logs, certificates and data directory"
	fi
	exit 1
fi
