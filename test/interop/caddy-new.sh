# SPDX-License-Identifier: Apache-2.0

# A current Caddy, built from the module proxy at a pinned version, for
# what Debian's Caddy 2.6.2 predates (ARI: renewalInfo, since 2.8).
# Sourced by run.sh.
# shellcheck source=test/interop/go-build.sh
. test/interop/go-build.sh
CADDY_NEW_VERSION=v2.10.2

# ensure_caddy_new builds caddy into $BIN/caddy-new/caddy once and sets
# CADDY_NEW.
ensure_caddy_new() {
	CADDY_NEW=$BIN/caddy-new/caddy
	build_pinned caddy-new github.com/caddyserver/caddy/v2/cmd/caddy "$CADDY_NEW_VERSION" "$CADDY_NEW"
}
