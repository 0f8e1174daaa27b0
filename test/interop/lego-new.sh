# A current lego, built from the module proxy at a pinned version, for the
# features Debian's lego 4.9 predates (ARI, profiles). Sourced by run.sh.
# The proxy refuses version lists, so `go install …@v4.25.2` fails its
# deprecation check; a throwaway module with `go get` at the exact version
# works.
LEGO_NEW_VERSION=v4.25.2

# ensure_lego_new builds lego into $BIN/lego-new/lego once and sets LEGO_NEW.
ensure_lego_new() {
	LEGO_NEW=$BIN/lego-new/lego
	[ -x "$LEGO_NEW" ] && return 0
	local mod=$TMP/lego-new-module started=$SECONDS
	mkdir -p "$mod" "$BIN/lego-new"
	(
		cd "$mod" &&
			go mod init weir-interop-lego >/dev/null 2>&1 &&
			go get "github.com/go-acme/lego/v4/cmd/lego@$LEGO_NEW_VERSION" &&
			go build -o "$LEGO_NEW" github.com/go-acme/lego/v4/cmd/lego
	) >>"$LOGS/lego-new-build.log" 2>&1 || {
		cat "$LOGS/lego-new-build.log"
		return 1
	}
	log "built lego $LEGO_NEW_VERSION in $((SECONDS - started))s: $("$LEGO_NEW" --version)"
}
