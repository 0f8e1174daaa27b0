#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The fresh-machine timing of issue 27: from a release tarball, with no Go
# toolchain on PATH, to a certificate issued to certbot, in seconds.
#
# Usage: bash deploy/tarball-timing.sh dist/weir_VERSION_linux_amd64.tar.gz
#
# Only the DNS server that stands in for the site's DNS
# (test/interop/dnsserver: every name is 127.0.0.1) is built with Go, before
# the clock starts. Then, in a clean environment whose PATH has no go: unpack,
# weir init, the listeners and http-01 moved to free loopback ports, weir
# serve, certbot certonly (standalone http-01). Everything is stopped by PID.
set -euo pipefail

TARBALL=$(realpath "${1:?usage: tarball-timing.sh WEIR.tar.gz}")
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for c in certbot openssl curl python3; do
	command -v "$c" >/dev/null 2>&1 || { echo "FATAL: $c is missing" >&2; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/weir-fresh.XXXXXX")
trap 'rm -rf "$W"' EXIT
(cd "$REPO" && go build -o "$W/dnsserver" ./test/interop/dnsserver)

cat >"$W/run.sh" <<'RUN'
set -euo pipefail
cd "$1"
if command -v go >/dev/null 2>&1; then echo "FATAL: go is on PATH" >&2; exit 1; fi
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT
fp() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WP=$(fp) AP=$(fp) HP=$(fp) DP=$(fp) PP=$(fp)
./dnsserver -listen "127.0.0.1:$DP" -a 127.0.0.1 >dns.log 2>&1 &
PIDS+=($!)
t0=$(date +%s.%N)
tar xzf "$2"
B=$(echo "$PWD"/weir_*/weir)
"$B" init -config weir.yaml -data-dir "$PWD/data" >init.log
sed -i -e "s|^  listen: \"localhost:14000\"|  listen: \"127.0.0.1:$WP\"|" \
	-e "s|^  listen: \"127.0.0.1:14001\"|  listen: \"127.0.0.1:$AP\"|" \
	-e "s|^    listen: \"localhost:14080\"|    listen: \"127.0.0.1:$PP\"|" \
	-e "s|port: 80 }|port: $HP }|" -e "s|^  dns-resolver: \"\"|  dns-resolver: \"127.0.0.1:$DP\"|" weir.yaml
t_init=$(date +%s.%N)
"$B" serve -config weir.yaml >serve.log 2>&1 &
PIDS+=($!)
for _ in $(seq 1 200); do
	curl -fsS --cacert data/root.pem -o /dev/null "https://127.0.0.1:$WP/directory" 2>/dev/null && break
	sleep 0.05
done
t_ready=$(date +%s.%N)
REQUESTS_CA_BUNDLE=data/root.pem timeout 120 certbot certonly --config-dir cb/c --work-dir cb/w --logs-dir cb/l \
	--server "https://127.0.0.1:$WP/directory" --standalone --http-01-address 127.0.0.1 --http-01-port "$HP" \
	-d fresh.weir.test --agree-tos -m ops@example.org --non-interactive --no-eff-email >certbot.log 2>&1 ||
	{ tail -n 20 certbot.log serve.log; exit 1; }
t1=$(date +%s.%N)
openssl verify -CAfile data/root.pem -untrusted cb/c/live/fresh.weir.test/chain.pem cb/c/live/fresh.weir.test/cert.pem
python3 -c "print('unpack + weir init %.2f s, weir serve ready %.2f s, certbot %.2f s: tarball to certificate %.2f s' % ($t_init - $t0, $t_ready - $t_init, $t1 - $t_ready, $t1 - $t0))"
RUN
env -i HOME="$HOME" PATH=/usr/sbin:/usr/bin:/sbin:/bin bash "$W/run.sh" "$W" "$TARBALL"
