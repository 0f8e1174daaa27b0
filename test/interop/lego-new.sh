# SPDX-License-Identifier: Apache-2.0

# A current lego, built from the module proxy at a pinned version, for the
# features Debian's lego 4.9 predates (ARI, profiles). Sourced by run.sh.
# shellcheck source=test/interop/go-build.sh
. test/interop/go-build.sh
LEGO_NEW_VERSION=v4.25.2

# ensure_lego_new builds lego into $BIN/lego-new/lego once and sets LEGO_NEW.
ensure_lego_new() {
	LEGO_NEW=$BIN/lego-new/lego
	build_pinned lego-new github.com/go-acme/lego/v4/cmd/lego "$LEGO_NEW_VERSION" "$LEGO_NEW"
}
