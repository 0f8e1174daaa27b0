#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# lego "exec" DNS provider hook for the weir interop test.
#
# lego (default EXEC_MODE) calls it as:
#   lego-dns-exec.sh present _acme-challenge.example.test. VALUE
#   lego-dns-exec.sh cleanup _acme-challenge.example.test. VALUE
# It keeps the TXT records in the directory served by test/interop/dnsserver
# (-txt-dir): one file per lower-case FQDN without the trailing dot, one value
# per line. The directory comes from WEIR_INTEROP_TXT_DIR.
set -euo pipefail

dir=${WEIR_INTEROP_TXT_DIR:?WEIR_INTEROP_TXT_DIR is not set}
if [ "$#" -ne 3 ]; then
	echo "usage: $0 present|cleanup FQDN VALUE" >&2
	exit 2
fi
action=$1
fqdn=$2
value=$3

name=$(printf '%s' "$fqdn" | tr '[:upper:]' '[:lower:]')
name=${name%.}
case $name in
'' | *[!a-z0-9._-]* | .* | *..*)
	echo "$0: refusing unsafe record name \"$fqdn\"" >&2
	exit 2
	;;
esac
file=$dir/$name

# Serialise concurrent calls; the DNS server reads the file on every query,
# so it is replaced atomically (write a temporary file, then rename).
exec 9>"$dir/.lock"
flock -w 10 9

case $action in
present)
	tmp=$(mktemp "$dir/.tmp.XXXXXX")
	if [ -f "$file" ]; then
		grep -vxF -- "$value" "$file" >"$tmp" || true
	fi
	printf '%s\n' "$value" >>"$tmp"
	mv -f "$tmp" "$file"
	;;
cleanup)
	if [ -f "$file" ]; then
		tmp=$(mktemp "$dir/.tmp.XXXXXX")
		grep -vxF -- "$value" "$file" >"$tmp" || true
		if [ -s "$tmp" ]; then
			mv -f "$tmp" "$file"
		else
			rm -f "$tmp" "$file"
		fi
	fi
	;;
*)
	echo "$0: unknown action \"$action\"" >&2
	exit 2
	;;
esac
