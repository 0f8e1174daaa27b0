#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The Debian package's install flow, run for real on this machine (root,
# Debian, no systemd needed): lintian, dpkg -i (twice: the second is an
# upgrade, which keeps the edited conffile and the CA), weir started as the unit
# starts it (user weir, /etc/weir/weir.yaml, /var/lib/weir, umask 0077), a
# certificate from certbot, stop by PID, dpkg -r (user and data kept), dpkg
# --purge (user and data gone).
#
# Usage: bash deploy/package-test.sh path/to/weir_VERSION_amd64.deb
# Environment: CI=true installs missing tools with apt-get; without it a
# missing tool is an error that names the package to install.
#
# The only edits to the packaged configuration are the ones an operator of
# a shared host makes: free loopback ports for the listeners and http-01,
# and this run's DNS server (test/interop/dnsserver, every name is
# 127.0.0.1) as the validation resolver.
set -euo pipefail

DEB=$(realpath "${1:?usage: package-test.sh WEIR.deb}")
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
log() { printf '==> %s\n' "$*"; }
die() {
	printf 'FATAL: package-test: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (dpkg -i)"
need=()
for pair in dpkg:dpkg certbot:certbot lintian:lintian openssl:openssl curl:curl python3:python3 setpriv:util-linux adduser:adduser; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
	[ "${CI:-}" = "true" ] || die "missing: ${need[*]} (apt-get install -y ${need[*]}, or run with CI=true)"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
	for pair in dpkg:dpkg certbot:certbot lintian:lintian setpriv:util-linux adduser:adduser; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || die "${pair%%:*} is still missing after apt-get install"
	done
fi
if dpkg-query -W -f='${Status}' weir 2>/dev/null | grep -q 'installed'; then
	die "a weir package is already installed here; this test installs and purges its own"
fi
getent passwd weir >/dev/null && die "a user weir exists already; this test creates and removes it"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weir-pkg.XXXXXX")
PIDS=()
installed=""
cleanup() {
	local rc=$? pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	# A failed run leaves no package, user or data behind either.
	if [ -n "$installed" ]; then
		dpkg --purge weir >/dev/null 2>&1 || true
	fi
	if [ "$rc" != 0 ]; then
		for f in "$TMP"/*.log; do
			[ -f "$f" ] && { echo "----- $f"; tail -n 40 "$f"; }
		done
	fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

log "lintian $(basename "$DEB")"
lintian --fail-on error --tag-display-limit 0 "$DEB" | tee "$TMP/lintian.log" || die "lintian reports errors"
log "lintian: $(grep -c '^E:' "$TMP/lintian.log" || true) errors, $(grep -c '^W:' "$TMP/lintian.log" || true) warnings"

started=$SECONDS
log "dpkg -i"
installed=1
dpkg -i "$DEB"
[ -x /usr/bin/weir ] || die "no /usr/bin/weir"
dpkg-query -W -f='${Conffiles}\n' weir | grep -q '/etc/weir/weir.yaml' || die "/etc/weir/weir.yaml is not a conffile"
[ -f /lib/systemd/system/weir.service ] || die "no systemd unit"
grep -q '^User=weir$' /lib/systemd/system/weir.service || die "the unit does not run as user weir"
getent passwd weir >/dev/null || die "no user weir"
[ "$(stat -c '%a %U' /var/lib/weir)" = "700 weir" ] || die "/var/lib/weir is $(stat -c '%a %U' /var/lib/weir), want 700 weir"
[ -f /var/lib/weir/root.pem ] || die "postinst did not run weir init (no /var/lib/weir/root.pem)"
[ "$(stat -c '%U %a' /var/lib/weir/ca/root-key.pem)" = "weir 600" ] || die "the root key is not weir's, 0600"
/usr/bin/weir version

WPORT=$(free_port) APORT=$(free_port) HPORT=$(free_port) DPORT=$(free_port) PPORT=$(free_port)
sed -i -e "s|^  listen: \"localhost:14000\"|  listen: \"127.0.0.1:$WPORT\"|" \
	-e "s|^  listen: \"127.0.0.1:14001\"|  listen: \"127.0.0.1:$APORT\"|" \
	-e "s|^    listen: \"localhost:14080\"|    listen: \"127.0.0.1:$PPORT\"|" \
	-e "s|^  http-01: { enabled: true, port: 80 }|  http-01: { enabled: true, port: $HPORT }|" \
	-e "s|^  dns-resolver: \"\"|  dns-resolver: \"127.0.0.1:$DPORT\"|" /etc/weir/weir.yaml
for p in "$WPORT" "$APORT" "$HPORT" "$DPORT" "$PPORT"; do
	grep -q "$p" /etc/weir/weir.yaml || die "the packaged weir.yaml no longer has the lines this test edits"
done
/usr/bin/weir check-config /etc/weir/weir.yaml

log "dpkg -i again (an upgrade): the edited conffile and the CA are kept"
root_before=$(sha256sum </var/lib/weir/ca/root-key.pem)
dpkg -i "$DEB"
[ "$(sha256sum </var/lib/weir/ca/root-key.pem)" = "$root_before" ] || die "reinstalling replaced the root key"
grep -q "127.0.0.1:$WPORT" /etc/weir/weir.yaml || die "reinstalling replaced the edited /etc/weir/weir.yaml"

go build -o "$TMP/dnsserver" ./test/interop/dnsserver
"$TMP/dnsserver" -listen "127.0.0.1:$DPORT" -a 127.0.0.1 >"$TMP/dnsserver.log" 2>&1 &
PIDS+=($!)

# As the unit runs it: user and group weir, in /var/lib/weir, umask 0077;
# setpriv execs weir, so $! is weir's PID.
log "weir serve as user weir"
(cd /var/lib/weir && umask 0077 && exec setpriv --reuid weir --regid weir --init-groups \
	/usr/bin/weir serve -config /etc/weir/weir.yaml) >"$TMP/weir.log" 2>&1 &
WEIR_PID=$!
PIDS+=("$WEIR_PID")
cp /var/lib/weir/root.pem "$TMP/root.pem"
DIRECTORY=https://127.0.0.1:$WPORT/directory
for _ in $(seq 1 100); do
	curl -fsS --cacert "$TMP/root.pem" -o /dev/null "$DIRECTORY" 2>/dev/null && break
	kill -0 "$WEIR_PID" 2>/dev/null || die "weir serve exited"
	sleep 0.2
done
curl -fsS --cacert "$TMP/root.pem" -o /dev/null "$DIRECTORY" || die "weir does not serve $DIRECTORY"
[ "$(ps -o user= -p "$WEIR_PID")" = "weir" ] || die "weir does not run as user weir"

log "certbot certonly pkg.weir.test (http-01)"
REQUESTS_CA_BUNDLE=$TMP/root.pem timeout 180 certbot certonly \
	--config-dir "$TMP/cb/config" --work-dir "$TMP/cb/work" --logs-dir "$TMP/cb/logs" \
	--server "$DIRECTORY" --standalone --http-01-address 127.0.0.1 --http-01-port "$HPORT" \
	-d pkg.weir.test --agree-tos -m ops@example.org --non-interactive --no-eff-email >"$TMP/certbot.log" 2>&1 ||
	die "certbot failed"
live=$TMP/cb/config/live/pkg.weir.test
openssl verify -CAfile "$TMP/root.pem" -untrusted "$live/chain.pem" "$live/cert.pem" || die "the certificate does not verify"
# Its CRL, over plain HTTP from the listener the packaged config turns on.
dp=$(openssl x509 -noout -ext crlDistributionPoints -in "$live/cert.pem" | grep -o 'URI:[^[:space:]]*' | sed 's/^URI://')
[ "$dp" = "http://127.0.0.1:$PPORT/ca/crl.der" ] || die "the CRL distribution point is $dp, want weir's plain-HTTP listener"
curl -fsS -o "$TMP/crl.der" "$dp" || die "no CRL at $dp"
cat "$live/chain.pem" "$TMP/root.pem" >"$TMP/crl-chain.pem"
openssl crl -inform DER -in "$TMP/crl.der" -CAfile "$TMP/crl-chain.pem" -noout 2>&1 | grep -q 'verify OK' ||
	die "the CRL at $dp does not verify"
log "issued in $((SECONDS - started))s from dpkg -i"

kill -TERM "$WEIR_PID"
for _ in $(seq 1 100); do kill -0 "$WEIR_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$WEIR_PID" 2>/dev/null && die "weir did not stop within 10 s of SIGTERM"
wait "$WEIR_PID" || true

log "dpkg -r: the user and the data stay"
dpkg -r weir
[ ! -e /usr/bin/weir ] || die "/usr/bin/weir left after dpkg -r"
getent passwd weir >/dev/null || die "dpkg -r removed the user weir"
[ -f /var/lib/weir/root.pem ] || die "dpkg -r removed the CA"
log "dpkg --purge: the user, the data and the conffile go"
dpkg --purge weir
installed=""
getent passwd weir >/dev/null && die "the user weir is left after purge"
[ ! -e /var/lib/weir ] || die "/var/lib/weir is left after purge"
[ ! -e /etc/weir/weir.yaml ] || die "/etc/weir/weir.yaml is left after purge"
log "package flow passed in $((SECONDS - started))s"
