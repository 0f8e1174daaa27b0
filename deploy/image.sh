#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# weir's container image, one per architecture, from the release tarballs of
# deploy/release.sh: the tarball's static binary FROM scratch (the
# Dockerfile), built by Debian's buildah with no BuildKit, no base image and
# no registry, written as an OCI archive next to the tarballs:
#   DIST/weir_<VERSION>_linux_<arch>.oci.tar   image ghcr.io/weir-pki/weir:<VERSION>
# then the Helm chart that defaults to that image (deploy/chart-package.sh),
# and SHA256SUMS again over every artefact in DIST, signed when
# WEIR_RELEASE_KEY is set (deploy/sign.sh: release.sh's sums do not cover
# the archives and the chart).
#
# Usage: bash deploy/image.sh DIST
# Environment:
#   ARCHES    the architectures (default: those of DIST's tarballs)
#   IMAGE     the repository (default ghcr.io/weir-pki/weir)
#   CI=true   installs buildah with apt-get when it is missing; without it a
#             missing tool is an error that names the package.
#
# The build's storage is a directory of its own (vfs driver), removed at the
# end: the archives are the result. Each image is built twice, in two
# storages, with --timestamp 0 (every file time and the creation time is
# 1970-01-01): the two image ids must be the same. The archive is packed with
# fixed file times, so one tarball gives one archive, byte for byte.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIST=$(cd "${1:?usage: image.sh DIST}" && pwd)
IMAGE=${IMAGE:-ghcr.io/weir-pki/weir}
die() {
	printf 'FATAL: image: %s\n' "$*" >&2
	exit 1
}

# shellcheck source=deploy/need-tools.sh
. "$REPO/deploy/need-tools.sh"
need_tools image buildah:buildah
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
[ -s "$CA_BUNDLE" ] || die "$CA_BUNDLE is missing (apt-get install -y ca-certificates)"

shopt -s nullglob
tarballs=("$DIST"/weir_*_linux_*.tar.gz)
[ "${#tarballs[@]}" -gt 0 ] || die "no weir_<VERSION>_linux_<arch>.tar.gz in $DIST (run deploy/release.sh $DIST)"
VERSION=""
found=""
for t in "${tarballs[@]}"; do
	n=${t##*/}
	n=${n%.tar.gz}
	v=${n#weir_}
	v=${v%_linux_*}
	[ -z "$VERSION" ] || [ "$VERSION" = "$v" ] || die "tarballs of two versions in $DIST: $VERSION and $v"
	VERSION=$v
	found="$found ${n##*_linux_}"
done
ARCHES=${ARCHES:-$found}
# A tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}: the version is used as it is.
[[ $VERSION =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "version $VERSION is not a valid image tag"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weir-image.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# buildah in a storage of its own: bah N ARGS...
bah() {
	local n=$1
	shift
	buildah --root "$TMP/storage$n" --runroot "$TMP/run$n" --storage-driver vfs "$@"
}

# context ARCH DIR: the build context from the tarball's binary.
context() {
	local arch=$1 ctx=$2 tarball member machine want
	tarball=$DIST/weir_${VERSION}_linux_$arch.tar.gz
	[ -f "$tarball" ] || die "no $tarball"
	member=$(tar -tzf "$tarball" | grep -E '^[^/]+/weir$' | head -n1) || true
	[ -n "$member" ] || die "$tarball holds no weir binary"
	mkdir -p "$ctx/x" "$ctx/rootfs/etc/weir" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/data"
	tar -xzf "$tarball" -C "$ctx/x" "$member"
	# The ELF header's e_machine: the binary is the architecture's.
	machine=$(od -An -tu2 -j18 -N2 "$ctx/x/$member" | tr -d ' ')
	case $arch in
	amd64) want=62 ;;
	arm64) want=183 ;;
	*) want=$machine ;;
	esac
	[ "$machine" = "$want" ] || die "$member in $tarball is for ELF machine $machine, not $arch"
	grep -q -a -F "$REVISION" "$ctx/x/$member" || die "$member in $tarball was not built from commit $REVISION"
	install -m 0755 "$ctx/x/$member" "$ctx/rootfs/weir"
	install -m 0644 "$REPO/deploy/image/weir.yaml" "$ctx/rootfs/etc/weir/weir.yaml"
	install -m 0644 "$REPO/deploy/image/passwd" "$ctx/rootfs/etc/passwd"
	install -m 0644 "$REPO/deploy/image/group" "$ctx/rootfs/etc/group"
	install -m 0644 "$CA_BUNDLE" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
	find "$ctx/rootfs" "$ctx/data" -type d -exec chmod 0755 {} +
	chmod 1777 "$ctx/rootfs/tmp"
	rm -rf "$ctx/x"
}

# The commit the binaries were built from (release.sh's -X main.commit), as
# the binary of this machine's architecture reports it; every architecture's
# binary must hold the same.
case $(uname -m) in
x86_64) host=amd64 ;;
aarch64) host=arm64 ;;
*) host=$(uname -m) ;;
esac
[ -f "$DIST/weir_${VERSION}_linux_$host.tar.gz" ] || die "no tarball for this machine ($host) in $DIST to read the commit from"
mkdir -p "$TMP/host"
tar -xzf "$DIST/weir_${VERSION}_linux_$host.tar.gz" -C "$TMP/host"
"$TMP"/host/*/weir version -json >"$TMP/version.json"
REVISION=$(sed -n 's/^ *"commit": *"\([0-9a-f]*\)".*/\1/p' "$TMP/version.json")
grep -q "^ *\"version\": *\"$VERSION\"" "$TMP/version.json" || die "the $host binary is not version $VERSION: $(cat "$TMP/version.json")"
[ -n "$REVISION" ] || echo "image: the $host binary names no commit (built outside git?): the revision label is empty" >&2
rm -rf "$TMP/host"

started=$SECONDS
for arch in $ARCHES; do
	t0=$SECONDS
	ctx=$TMP/ctx-$arch
	context "$arch" "$ctx"
	ref=$IMAGE:$VERSION
	for n in 1 2; do
		bah $n bud --timestamp 0 --platform "linux/$arch" --layers=false \
			--build-arg VERSION="$VERSION" --build-arg REVISION="$REVISION" \
			-f "$REPO/Dockerfile" -t "$ref" --iidfile "$TMP/iid$n" "$ctx" >"$TMP/bud$n.log" 2>&1 ||
			{ cat "$TMP/bud$n.log" >&2; die "buildah bud for $arch failed"; }
	done
	id=$(cat "$TMP/iid1")
	[ "$id" = "$(cat "$TMP/iid2")" ] || die "two builds of $arch gave two images: $id and $(cat "$TMP/iid2")"
	got=$(bah 1 inspect --type image --format '{{.OCIv1.OS}}/{{.OCIv1.Architecture}} {{.OCIv1.Config.User}}' "$ref")
	[ "$got" = "linux/$arch 65532:65532" ] || die "the $arch image is $got"
	rm -rf "$TMP/oci-$arch"
	bah 1 push -q "$ref" "oci:$TMP/oci-$arch:$ref"
	out=$DIST/weir_${VERSION}_linux_$arch.oci.tar
	tar -C "$TMP/oci-$arch" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u+rw,go+r,go-w \
		-cf "$out" oci-layout index.json blobs
	digest=$(sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p' "$TMP/oci-$arch/index.json")
	rm -rf "$TMP/storage1" "$TMP/run1" "$TMP/storage2" "$TMP/run2" "$ctx" "$TMP/oci-$arch"
	echo "built $out: $ref for $arch, manifest $digest, image id ${id#sha256:}, revision $REVISION, $(stat -c %s "$out") bytes, in $((SECONDS - t0))s"
done
echo "images built in $((SECONDS - started))s"

bash "$REPO/deploy/chart-package.sh" "$DIST" "$VERSION"

# Every artefact, release.sh's and these.
bash "$REPO/deploy/sign.sh" "$DIST"
