#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The Helm chart deploy/helm/weir as a release artefact: helm package with
# appVersion set to the release's version, so that the chart's default image
# (values image.repository, tag "" = appVersion) is the one deploy/image.sh
# built, ghcr.io/weir-pki/weir:<VERSION>. helm template of the packaged
# chart must render exactly that image for weir's containers.
#
# Usage: bash deploy/chart-package.sh DIST VERSION      # DIST/weir-<chart version>.tgz
# Environment:
#   CHART_VERSION  the chart's version (SemVer). Default: VERSION without
#                  its leading v when that is SemVer (a release tag), else
#                  Chart.yaml's version with the pre-release -g<VERSION>
#                  (a build between releases sorts below the next one).
#
# helm is the pinned one of deploy/helm-test.sh, run with go run.
set -euo pipefail

HELM=helm.sh/helm/v3/cmd/helm@v3.22.0

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIST=$(cd "${1:?usage: chart-package.sh DIST VERSION}" && pwd)
VERSION=${2:?usage: chart-package.sh DIST VERSION}
CHART=$REPO/deploy/helm/weir
die() {
	printf 'FATAL: chart-package: %s\n' "$*" >&2
	exit 1
}
helm() { (cd "$REPO" && go run "$HELM" "$@"); }

semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if [ -z "${CHART_VERSION:-}" ]; then
	if [[ ${VERSION#v} =~ $semver ]]; then
		CHART_VERSION=${VERSION#v}
	else
		base=$(sed -n 's/^version: *//p' "$CHART/Chart.yaml")
		CHART_VERSION="$base-g$(printf '%s' "$VERSION" | tr -c '0-9A-Za-z.-' '-')"
	fi
fi
[[ $CHART_VERSION =~ $semver ]] || die "chart version $CHART_VERSION is not SemVer"
repository=$(sed -n '/^image:/,/^[a-z]/s/^  repository: *//p' "$CHART/values.yaml")
tag=$(sed -n '/^image:/,/^[a-z]/s/^  tag: *//p' "$CHART/values.yaml")
[ "$tag" = '""' ] || die "values.yaml's image.tag is $tag; it must be \"\" (the appVersion)"

rm -f "$DIST/weir-$CHART_VERSION.tgz"
helm package "$CHART" --app-version "$VERSION" --version "$CHART_VERSION" -d "$DIST" >/dev/null
pkg=$DIST/weir-$CHART_VERSION.tgz
[ -f "$pkg" ] || die "helm package wrote no $pkg"

# The rendered images of weir's containers (not the initImage's).
TMP=$(mktemp -d "${TMPDIR:-/tmp}/weir-chart.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
helm template r "$pkg" >"$TMP/rendered.yaml"
want="$repository:$VERSION"
images=$(sed -n 's/^ *image: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$TMP/rendered.yaml" | grep -F "$repository:" | sort -u)
[ -n "$images" ] || die "helm template of $pkg renders no $repository image"
[ "$images" = "$want" ] || die "helm template of $pkg renders $(echo "$images" | tr '\n' ' '), want $want"
echo "packaged $pkg (chart $CHART_VERSION, appVersion $VERSION): helm template renders image $want"
