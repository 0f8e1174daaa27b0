#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# uacme hook for the weir interop test (clients-flow.sh).
#
# uacme calls it for each challenge of an authorization, in the order weir
# offers them, until one call of method "begin" exits 0:
#   uacme-hook.sh begin|done|failed TYPE IDENTIFIER TOKEN AUTH
# It takes only the type named in UACME_TEST_TYPE and declines the others
# (exit 1):
#   tls-alpn-01: hands AUTH to the ualpn server whose control socket is
#                UACME_TEST_UALPN_SOCK (ualpn answers the validation);
#   dns-01:      AUTH is the TXT value; it is written into the test DNS
#                server through the lego exec hook UACME_TEST_DNS_EXEC
#                (which reads WEIR_INTEROP_TXT_DIR).
set -euo pipefail

if [ "$#" -ne 5 ]; then
	echo "usage: $0 method type identifier token auth" >&2
	exit 85
fi
method=$1 type=$2 ident=$3 auth=$5

if [ "$type" != "${UACME_TEST_TYPE:?UACME_TEST_TYPE is not set}" ]; then
	exit 1
fi

# ualpn's client mode prints OK or an error, and exits non-zero either way.
ualpn_ctl() {
	local out
	out=$(printf '%s\n' "$1" | ualpn -s "${UACME_TEST_UALPN_SOCK:?UACME_TEST_UALPN_SOCK is not set}" 2>&1 || true)
	if [ "$out" != OK ]; then
		echo "$0: ualpn: $out" >&2
		return 1
	fi
}

case $type:$method in
tls-alpn-01:begin) ualpn_ctl "auth $ident $auth" ;;
tls-alpn-01:done | tls-alpn-01:failed) ualpn_ctl "unauth $ident" ;;
dns-01:begin) exec "${UACME_TEST_DNS_EXEC:?}" present "_acme-challenge.$ident." "$auth" ;;
dns-01:done | dns-01:failed) exec "${UACME_TEST_DNS_EXEC:?}" cleanup "_acme-challenge.$ident." "$auth" ;;
*)
	echo "$0: unexpected method/type $method $type" >&2
	exit 1
	;;
esac
