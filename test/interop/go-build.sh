# SPDX-License-Identifier: Apache-2.0

# Building a client's Go command at a pinned version from the module proxy,
# sourced by lego-new.sh and caddy-new.sh. The proxy refuses version
# lists, so `go install PKG@VERSION` fails its deprecation check; a
# throwaway module with `go get` at the exact version works.

# build_pinned NAME PACKAGE VERSION OUT builds PACKAGE at VERSION into OUT
# unless OUT exists. The build's output goes to $LOGS/NAME-build.log, and
# is printed when it fails.
build_pinned() {
	local name=$1 pkg=$2 version=$3 out=$4
	local mod=$TMP/$1-module started=$SECONDS
	[ -x "$out" ] && return 0
	mkdir -p "$mod" "$(dirname "$out")"
	(
		cd "$mod" &&
			go mod init "weir-interop-$name" >/dev/null 2>&1 &&
			go get "$pkg@$version" &&
			go build -o "$out" "$pkg"
	) >>"$LOGS/$name-build.log" 2>&1 || {
		cat "$LOGS/$name-build.log"
		return 1
	}
	log "built $name $version in $((SECONDS - started))s"
}
