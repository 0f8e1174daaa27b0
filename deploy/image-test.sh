#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The container image of deploy/image.sh, run for real without a container
# runtime: the OCI archive is unpacked by buildah (buildah from, buildah
# mount) and weir runs out of the image's root filesystem as the image's
# user (chroot --userspec=65532:65532), with the image's configuration and
# an empty /data, as the container's CMD starts it. Then a certificate from
# certbot (standalone http-01), checked with openssl verify against the root
# weir made in /data, and the image's HEALTHCHECK command.
#
# Usage: bash deploy/image-test.sh DIST/weir_VERSION_linux_<this machine's arch>.oci.tar
# Environment: CI=true installs missing tools with apt-get; without it a
# missing tool is an error that names the package to install.
#
# The only edits to the image's configuration are the ones a shared host
# needs: the listeners on free loopback ports, http-01 on a free port and
# this run's DNS server (test/interop/dnsserver, every name is 127.0.0.1) as
# the validation resolver. It prints the image's size (the archive, and the
# unpacked root filesystem).
set -euo pipefail

ARCHIVE=$(realpath "${1:?usage: image-test.sh WEIR.oci.tar}")
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '==> %s\n' "$*"; }
die() {
	printf 'FATAL: image-test: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (chroot, buildah's storage)"
# shellcheck source=deploy/need-tools.sh
. "$REPO/deploy/need-tools.sh"
need_tools image-test buildah:buildah certbot:certbot openssl:openssl curl:curl python3:python3 chroot:coreutils

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weir-imgtest.XXXXXX")
PIDS=()
ctr=""
bah() { buildah --root "$TMP/storage" --runroot "$TMP/run" --storage-driver vfs "$@"; }
cleanup() {
	local rc=$? pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ "$rc" != 0 ]; then
		for f in "$TMP"/*.log; do
			[ -f "$f" ] && { echo "--- ${f##*/}"; tail -n 30 "$f"; }
		done
	fi
	if [ -n "$ctr" ]; then
		bah umount "$ctr" >/dev/null 2>&1 || true
		bah rm "$ctr" >/dev/null 2>&1 || true
	fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
(cd "$REPO" && go build -o "$TMP/dnsserver" ./test/interop/dnsserver)

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
started=$(now)
log "buildah from oci-archive:$ARCHIVE"
ctr=$(bah from -q "oci-archive:$ARCHIVE")
ROOTFS=$(bah mount "$ctr")
t_unpack=$(since "$started")

log "the image's configuration"
bah inspect "$ctr" >"$TMP/inspect.json"
python3 - "$TMP/inspect.json" "$ARCHIVE" "$TMP/revision" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))["OCIv1"]
c = d["config"]
version = os.path.basename(sys.argv[2])[len("weir_"):].rsplit("_linux_", 1)[0]
want = {
    "User": "65532:65532",
    "Entrypoint": ["/weir"],
    "Cmd": ["serve", "-config", "/etc/weir/weir.yaml"],
    "Volumes": {"/data": {}},
    "ExposedPorts": {"14000/tcp": {}, "14001/tcp": {}, "14080/tcp": {}},
}
for k, v in want.items():
    assert c.get(k) == v, "%s is %r, want %r" % (k, c.get(k), v)
labels = c.get("Labels", {})
for k, v in [("org.opencontainers.image.licenses", "Apache-2.0"),
             ("org.opencontainers.image.source", "https://github.com/weir-pki/weir"),
             ("org.opencontainers.image.version", version)]:
    assert labels.get(k) == v, "label %s is %r, want %r" % (k, labels.get(k), v)
rev = labels.get("org.opencontainers.image.revision", "")
open(sys.argv[3], "w").write(rev)
assert d["created"].startswith("1970-01-01T00:00:00"), "created %s, want the epoch (--timestamp 0)" % d["created"]
print("user %s, entrypoint %s, cmd %s, volume /data, ports %s; version %s, revision %s, %s/%s" % (
    c["User"], c["Entrypoint"], " ".join(c["Cmd"]), " ".join(sorted(c["ExposedPorts"])), version, rev or "(none)",
    d["os"], d["architecture"]))
PY

log "the image's files"
check() { # PATH MODE UID:GID
	local got
	got=$(stat -c '%a %u:%g' "$ROOTFS$1") || die "$1 is missing from the image"
	[ "$got" = "$2 $3" ] || die "$1 is $got, want $2 $3"
}
check /weir 755 0:0
check /etc/weir/weir.yaml 644 0:0
check /etc/ssl/certs/ca-certificates.crt 644 0:0
check /etc/passwd 644 0:0
check /etc/group 644 0:0
check /data 755 65532:65532
check /tmp 1777 0:0
[ -z "$(ls -A "$ROOTFS/data")" ] || die "/data is not empty in the image"
grep -q '^nonroot:x:65532:65532:' "$ROOTFS/etc/passwd" || die "/etc/passwd has no user 65532"
grep -q '^nonroot:x:65532:' "$ROOTFS/etc/group" || die "/etc/group has no group 65532"
cmp -s "$ROOTFS/etc/weir/weir.yaml" "$REPO/deploy/image/weir.yaml" || die "/etc/weir/weir.yaml is not deploy/image/weir.yaml"
grep -q 'BEGIN CERTIFICATE' "$ROOTFS/etc/ssl/certs/ca-certificates.crt" || die "the CA bundle holds no certificate"
ls -A "$ROOTFS" | sort | tr '\n' ' '
echo
archive_bytes=$(stat -c %s "$ARCHIVE")
rootfs_bytes=$(du -sb "$ROOTFS" | cut -f1)
echo "image size: OCI archive $archive_bytes bytes ($(du -h --apparent-size "$ARCHIVE" | cut -f1)), root filesystem $rootfs_bytes bytes ($(du -sh "$ROOTFS" | cut -f1) on disk)"

fp() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WP=$(fp) AP=$(fp) HP=$(fp) DP=$(fp) PP=$(fp)
"$TMP/dnsserver" -listen "127.0.0.1:$DP" -a 127.0.0.1 >"$TMP/dns.log" 2>&1 &
PIDS+=($!)
# The image's configuration with loopback ports, as a file mounted over it would be.
sed -e "s|^  listen: \"0.0.0.0:14000\"|  listen: \"127.0.0.1:$WP\"|" \
	-e "s|^  external-url: \"https://localhost:14000\"|  external-url: \"https://localhost:$WP\"|" \
	-e "s|^  http: { listen: \"0.0.0.0:14080\" }|  http: { listen: \"127.0.0.1:$PP\" }|" \
	-e "s|^  listen: \"127.0.0.1:14001\"|  listen: \"127.0.0.1:$AP\"|" \
	"$ROOTFS/etc/weir/weir.yaml" >"$TMP/test.yaml"
printf 'challenges:\n  http-01: { enabled: true, port: %s }\n  dns-resolver: "127.0.0.1:%s"\n' "$HP" "$DP" >>"$TMP/test.yaml"
for p in "$WP" "$PP" "$AP"; do grep -q "127.0.0.1:$p\"" "$TMP/test.yaml" || die "the image's weir.yaml no longer has the listeners this test moves"; done
install -m 0644 "$TMP/test.yaml" "$ROOTFS/etc/weir/test.yaml"
# IN_IMAGE CMD...: as the container runs CMD, user 65532 in the image's root
# and an environment of the image's only (env and chroot exec, so that $!
# of a command started with & is weir's PID).
IN_IMAGE=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/data
	/usr/sbin/chroot --userspec=65532:65532 "$ROOTFS")

# The labels name what the binary says it is.
"${IN_IMAGE[@]}" /weir version -json >"$TMP/version.json"
python3 - "$TMP/version.json" "$TMP/revision" "$ARCHIVE" <<'PY'
import json, os, sys
v = json.load(open(sys.argv[1]))
rev = open(sys.argv[2]).read()
version = os.path.basename(sys.argv[3])[len("weir_"):].rsplit("_linux_", 1)[0]
assert v["version"] == version, "the binary is version %s, the image %s" % (v["version"], version)
assert v["commit"] == rev, "the binary is commit %r, the revision label %r" % (v["commit"], rev)
PY

log "weir serve in the image's root, as 65532:65532"
t0=$(now)
"${IN_IMAGE[@]}" /weir serve -config /etc/weir/test.yaml >"$TMP/serve.log" 2>&1 &
weir_pid=$!
PIDS+=("$weir_pid")
ready=""
for _ in $(seq 1 600); do
	if [ -f "$ROOTFS/data/root.pem" ] && curl -fsS --cacert "$ROOTFS/data/root.pem" -o /dev/null "https://127.0.0.1:$WP/directory" 2>/dev/null; then
		ready=1
		break
	fi
	kill -0 "$weir_pid" 2>/dev/null || die "weir serve exited: $(tail -n 20 "$TMP/serve.log")"
	sleep 0.1
done
[ -n "$ready" ] || die "weir serve did not answer on https://127.0.0.1:$WP/directory"
t_ready=$(since "$t0")
"${IN_IMAGE[@]}" /weir healthcheck -config /etc/weir/test.yaml -timeout 5s || die "the HEALTHCHECK command fails"
bad=$(find "$ROOTFS/data" ! -user 65532 -print -quit)
[ -z "$bad" ] || die "$bad in /data is not owned by 65532"

log "certbot certonly (standalone http-01 on 127.0.0.1:$HP)"
t0=$(now)
REQUESTS_CA_BUNDLE=$ROOTFS/data/root.pem timeout 120 certbot certonly --config-dir "$TMP/cb/c" --work-dir "$TMP/cb/w" --logs-dir "$TMP/cb/l" \
	--server "https://127.0.0.1:$WP/directory" --standalone --http-01-address 127.0.0.1 --http-01-port "$HP" \
	-d image.weir.test --agree-tos -m ops@example.org --non-interactive --no-eff-email >"$TMP/certbot.log" 2>&1 ||
	die "certbot failed"
t_certbot=$(since "$t0")
live=$TMP/cb/c/live/image.weir.test
openssl verify -CAfile "$ROOTFS/data/root.pem" -untrusted "$live/chain.pem" "$live/cert.pem" || die "the certificate does not verify against weir's root"
# Stopped by its PID, weir is gone: nothing answers on its port.
kill -TERM "$weir_pid"
wait "$weir_pid" || true
rest=()
for p in "${PIDS[@]}"; do [ "$p" = "$weir_pid" ] || rest+=("$p"); done
PIDS=("${rest[@]}")
if curl -fsS -k -o /dev/null "https://127.0.0.1:$WP/directory" 2>/dev/null; then
	die "weir still answers on 127.0.0.1:$WP after its PID $weir_pid was stopped"
fi
echo "unpack ${t_unpack}s, weir serve ready ${t_ready}s (a new CA in /data), certbot ${t_certbot}s"
log "the image passed in $(since "$started")s"
