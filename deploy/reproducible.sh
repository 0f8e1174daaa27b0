#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The reproducibility check of the release: deploy/release.sh twice from
# the same commit, the second time from a copy of the checkout at another
# path, with another TMPDIR, umask 077, another time zone and locale and an
# empty Go build cache (so the compiler runs again rather than reusing the
# first build's objects), later in time. Every artefact (binaries inside the
# tarballs, tarballs, .debs, SBOMs, SHA256SUMS) must be byte-identical.
#
# Usage: bash deploy/reproducible.sh OUT_DIR
#   OUT_DIR gets the first build (the one the rest of CI tests).
# Environment: ARCHES, VERSION as for release.sh. WEIR_RELEASE_KEY is
# ignored: the builds are compared unsigned (deploy/sign.sh signs after).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mkdir -p "${1:?usage: reproducible.sh OUT_DIR}" && cd "$1" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/weir-repro.XXXXXX")
trap 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"' EXIT
unset WEIR_RELEASE_KEY

mkdir -p "$W/tmp1" "$W/tmp2" "$W/b" "$W/gocache"
started=$SECONDS
(umask 022 && TMPDIR=$W/tmp1 bash "$REPO/deploy/release.sh" "$OUT")
echo "first build: $((SECONDS - started))s"

# The same commit (and the same uncommitted changes, if any) elsewhere.
cp -a "$REPO" "$W/src with space"
rm -rf "$W/src with space/dist"
started=$SECONDS
(umask 077 && cd / && TMPDIR=$W/tmp2 GOCACHE=$W/gocache TZ=Pacific/Chatham LANG=de_DE.UTF-8 \
	bash "$W/src with space/deploy/release.sh" "$W/b")
echo "second build: $((SECONDS - started))s"

# The two lists of artefacts, then each pair of files.
(cd "$OUT" && ls) >"$W/list1"
(cd "$W/b" && ls) >"$W/list2"
if ! diff "$W/list1" "$W/list2"; then
	echo "FATAL: the two builds made different sets of files" >&2
	exit 1
fi
bad=0
while read -r f; do
	[ "$f" = SHA256SUMS.sig ] && continue
	if cmp -s "$OUT/$f" "$W/b/$f"; then
		echo "identical: $f"
	else
		echo "DIFFERENT: $f" >&2
		bad=1
	fi
done <"$W/list1"
# The binaries themselves, named as such in the log.
for t in "$OUT"/*.tar.gz; do
	n=$(basename "$t" .tar.gz)
	mkdir -p "$W/x1/$n" "$W/x2/$n"
	tar -xzf "$t" -C "$W/x1/$n"
	tar -xzf "$W/b/$n.tar.gz" -C "$W/x2/$n"
	for bin in weir weir-load; do
		if cmp -s "$W/x1/$n/$n/$bin" "$W/x2/$n/$n/$bin"; then
			echo "identical binary: $n/$bin $(sha256sum <"$W/x1/$n/$n/$bin" | cut -c1-64)"
		else
			echo "DIFFERENT binary: $n/$bin" >&2
			bad=1
		fi
	done
done
[ "$bad" = 0 ] || { echo "FATAL: the release is not reproducible" >&2; exit 1; }
echo "reproducible: $(wc -l <"$W/list1") files byte-identical across the two builds"
