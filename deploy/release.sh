#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Release artefacts from one command: for linux/amd64 and linux/arm64, a
# static (CGO_ENABLED=0) tarball of weir and weir-load, a Debian package
# (nfpm, pinned below) and a CycloneDX SBOM of each binary
# (cyclonedx-gomod, pinned below), then SHA256SUMS of all of them, signed
# when a release key is given (deploy/sign.sh).
#
# Usage (from anywhere in the repository):
#   bash deploy/release.sh [OUT_DIR]        # default dist/
# Environment:
#   VERSION   the version to stamp (default: git describe --tags --always
#             --dirty, or "dev" outside git); a leading v is dropped for the
#             Debian package version, and one that is not a release number
#             (X.Y…) gets 0~ in front, so that it sorts below every release.
#   ARCHES    the architectures (default "amd64 arm64").
#
#   WEIR_RELEASE_KEY  the release's SSH signing key (deploy/sign.sh); unset,
#             SHA256SUMS is written but not signed.
#
# Reproducible: the same commit gives byte-identical binaries, tarballs, .debs
# and SBOMs, whatever the checkout's path, TMPDIR, umask, time zone, locale or
# build cache (deploy/reproducible.sh builds twice and compares). The binaries
# get main.version, main.commit and main.date through -ldflags -X (weir
# version prints them) with -trimpath; every date (the binary's, the files'
# in the tarballs and packages, the changelog's) is the commit's; the archives
# have sorted entries, fixed owners and modes, and gzip without a name or time.
set -euo pipefail
export TZ=UTC LC_ALL=C

# nfpm, pinned: go run fetches it through the module proxy and caches it.
# (v2.46 and later need modules the proxy does not serve.)
NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
# cyclonedx-gomod, pinned: the SBOMs' generator (the CycloneDX project's own
# tool for Go; it reads the modules a binary is built from, as go build
# selects them for that platform, and detects their licenses).
CYCLONEDX=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
OUT=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
ARCHES=${ARCHES:-amd64 arm64}

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	: "${VERSION:=$(git describe --tags --always --dirty)}"
	COMMIT=$(git rev-parse HEAD)
	DATE=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)
else
	: "${VERSION:=dev}"
	COMMIT=""
	DATE=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
fi
DEB_VERSION=${VERSION#v}
# A release tag (v1.2.3…) is the package version; anything else (a bare
# commit hash, which may start with a digit) sorts below every release.
if ! [[ $DEB_VERSION =~ ^[0-9]+\.[0-9]+ ]]; then
	DEB_VERSION="0~$DEB_VERSION"
fi
DEB_VERSION=${DEB_VERSION//-/.}
EPOCH=$(date -u -d "$DATE" +%s)
LDFLAGS="-s -w -X main.version=$VERSION -X main.commit=$COMMIT -X main.date=$DATE"

STAGE_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/weir-release.XXXXXX")
trap 'rm -rf "$STAGE_ROOT"' EXIT
# Built for this machine, not for $arch: it runs here.
GOBIN=$STAGE_ROOT/tools go install "$CYCLONEDX"

# What every package holds besides the binary: the configuration (the
# commented defaults with data-dir /var/lib/weir), the hardened unit made
# for user weir and /usr/bin, the copyright and a changelog.
COMMON=$STAGE_ROOT/common
mkdir -p "$COMMON"
go run ./cmd/weir init -print-config -config /etc/weir/weir.yaml -data-dir /var/lib/weir >"$COMMON/weir.yaml"
sed -e 's|/usr/local/bin/weir|/usr/bin/weir|g' \
	-e 's|^DynamicUser=yes$|User=weir\nGroup=weir|' \
	-e '/^#   install /d; /^#   weir init -print-config/d; /^#   \$EDITOR/d; /^#   systemctl daemon-reload/d' \
	-e 's|^# weir creates its CA|# The package made the CA|' \
	docs/weir.service >"$COMMON/weir.service"
grep -q '^User=weir$' "$COMMON/weir.service" && ! grep -q /usr/local "$COMMON/weir.service" ||
	{ echo "release.sh: docs/weir.service no longer matches the edits made for the package" >&2; exit 1; }
cat >"$COMMON/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: weir
Source: https://github.com/weir-pki/weir
Comment: weir is statically linked with the Go modules it uses, each under
 its own license; the release's SBOMs (weir_VERSION_linux_ARCH.cdx.json)
 name every module, its version and the license found in it.

Files: *
Copyright: ${DATE%%-*} the weir authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License");
 you may not use this file except in compliance with the License.
 You may obtain a copy of the License at
 .
     http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in "/usr/share/common-licenses/Apache-2.0".
COPYRIGHT
{
	printf 'weir (%s) unstable; urgency=medium\n\n' "$DEB_VERSION"
	printf '  * Built from commit %s.\n\n' "${COMMIT:-unknown}"
	printf ' -- weir maintainers <weir@weir-pki.dev>  %s\n' "$(date -u -R -d "$DATE")"
} | gzip -9n >"$COMMON/changelog.gz"

for arch in $ARCHES; do
	name=weir_${VERSION}_linux_$arch
	dir=$STAGE_ROOT/$name
	mkdir -p "$dir"
	started=$SECONDS
	for cmd in weir weir-load; do
		CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags "$LDFLAGS" -o "$dir/$cmd" "./cmd/$cmd"
	done
	for cmd in weir weir-load; do
		CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$STAGE_ROOT/tools/cyclonedx-gomod" app -json -licenses \
			-noserial -notimestamp -std -main "cmd/$cmd" -output "$OUT/${cmd}_${VERSION}_linux_$arch.cdx.json" .
	done
	cp LICENSE README.md config.example.yaml docs/weir.service "$dir/"
	tar -C "$STAGE_ROOT" --format=gnu --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
		--mtime="@$EPOCH" --sort=name -cf - "$name" | gzip -9n >"$OUT/$name.tar.gz"
	echo "built $OUT/$name.tar.gz in $((SECONDS - started))s"

	started=$SECONDS
	cp -r "$COMMON"/* deploy/debian "$dir/"
	chmod -R u=rwX,go=rX "$dir"
	rm -f "$OUT/weir_${DEB_VERSION}_$arch.deb"
	(cd "$dir" && ARCH=$arch VERSION=$DEB_VERSION SOURCE_DATE_EPOCH=$EPOCH \
		go run "$NFPM" package --config "$REPO/deploy/nfpm.yaml" --packager deb --target "$OUT/weir_${DEB_VERSION}_$arch.deb")
	echo "built $OUT/weir_${DEB_VERSION}_$arch.deb in $((SECONDS - started))s"
done

bash deploy/sign.sh "$OUT"
