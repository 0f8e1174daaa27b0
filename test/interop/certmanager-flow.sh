# SPDX-License-Identifier: Apache-2.0

# cert-manager's ACME client, sourced by run.sh. cert-manager itself needs
# Kubernetes; test/interop/certmanager is a program, a Go module of its
# own, that runs the package cert-manager speaks ACME with
# (github.com/cert-manager/cert-manager/third_party/forked/acme, at the
# release its go.mod pins) the way cert-manager's controllers call it:
#   - an RSA 2048 account, registered twice with the same key (the second
#     time finds the account), and its contact updated;
#   - a Certificate of two names with a duration of 30 days (notAfter),
#     solved by http-01 on the http-01 port; then finalized again, as when
#     cert-manager lost its record of the finalize: with the same CSR it
#     gets the same certificate, with another a 403, after which the order
#     reads as valid with that certificate;
#   - renewalInfo (ARI) for it, then a renewal that replaces it (its
#     authorizations reused), then one more order naming the same
#     predecessor, refused as alreadyReplaced and retried without replaces,
#     as cert-manager does;
#   - a wildcard and its base name, solved by dns-01 through the test DNS
#     server.
# The program checks each answer cert-manager relies on; the shell checks
# the SANs and the chain of each certificate with openssl.
# It uses run.sh's variables and helpers (BIN, TMP, LOGS, ROOT, DIRECTORY,
# HPORT, TXT_DIR, pass, fail, client, split_chain, check_leaf).

CM_LOG=$LOGS/certmanager.log

certmanager_flow() {
	local out=$TMP/certmanager started=$SECONDS
	mkdir -p "$out"
	CLIENT_LOG=$CM_LOG
	if ! (cd test/interop/certmanager && go build -o "$BIN/cmflow" .) >>"$CM_LOG" 2>&1; then
		fail "cert-manager client: build test/interop/certmanager" "go build failed (the module proxy must serve github.com/cert-manager/cert-manager)"
		return 1
	fi
	log "built the cert-manager client program in $((SECONDS - started))s"
	client "cert-manager client: account, http-01 with a duration, finalize again, ARI, renewal with replaces, dns-01 wildcard" "$CM_LOG" \
		"$BIN/cmflow" -directory "$DIRECTORY" -ca-bundle "$ROOT" -http01 "127.0.0.1:$HPORT" \
		-txt-dir "$TXT_DIR" -out "$out" || return 1
	local f names rc=0
	for f in http01 renewed dns01; do
		case $f in
		dns01) names=("*.cmw.weir.test" cmw.weir.test) ;;
		*) names=(cm1.weir.test cm2.weir.test) ;;
		esac
		split_chain "$out/$f.pem" "$out/$f" >/dev/null
		check_leaf "cert-manager client $f" "$out/$f.leaf.pem" "$out/$f.rest.pem" "${names[@]}" || rc=1
	done
	return "$rc"
}
