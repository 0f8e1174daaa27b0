#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# CI for the release artefacts (called from .ci/run): deploy/release.sh for
# every architecture, twice, compared byte for byte (deploy/reproducible.sh),
# the SBOMs against the binaries' own build information (deploy/sbom-test.sh),
# SHA256SUMS signed with a key made for the run and verified as a user does
# (deploy/sign-test.sh), the images and the chart (deploy/image.sh), then the
# Debian package's install flow on this machine (deploy/package-test.sh),
# the tarball's timing to a certificate without Go (deploy/tarball-timing.sh),
# certbot against weir run out of the image's root filesystem
# (deploy/image-test.sh) and the Helm chart's render and schema
# validation (deploy/helm-test.sh). Under CI=true a missing
# tool fails the run; the scripts install what apt-get can.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/weir-dist.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

started=$SECONDS
bash deploy/reproducible.sh "$OUT"
echo "release artefacts, built twice and compared, in $((SECONDS - started))s"
# The container images and the packaged chart; SHA256SUMS then covers them
# too, and sign-test.sh signs it.
bash deploy/image.sh "$OUT"
ls -l "$OUT"
bash deploy/sbom-test.sh "$OUT"
bash deploy/sign-test.sh "$OUT"

arch=$(dpkg --print-architecture)
debs=("$OUT"/weir_*_"$arch".deb)
[ -f "${debs[0]}" ] || { echo "FATAL: no package for $arch in $OUT" >&2; exit 1; }
bash deploy/package-test.sh "${debs[0]}"
# The fresh-machine figure: the tarball, no Go on PATH, to a certbot issuance.
tarballs=("$OUT"/weir_*_linux_"$arch".tar.gz)
bash deploy/tarball-timing.sh "${tarballs[0]}"
bash deploy/image-test.sh "$OUT"/weir_*_linux_"$arch".oci.tar
bash deploy/helm-test.sh
