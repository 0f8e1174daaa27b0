#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The release signature's check, as CI runs it: a signing key made for this
# run stands in for the release key; deploy/sign.sh signs DIR's SHA256SUMS
# with it, then the commands of docs/releases.md ("Verifying a download")
# must pass as a user types them, and must fail for a SHA256SUMS changed by
# one byte, for a file changed after signing, for a signature made under
# another namespace and for another key.
#
# Usage: bash deploy/sign-test.sh DIR    (a release directory; it is signed)
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$(cd "${1:?usage: sign-test.sh DIR}" && pwd)
command -v ssh-keygen >/dev/null 2>&1 || { echo "FATAL: ssh-keygen is missing (apt-get install -y openssh-client)" >&2; exit 1; }
K=$(mktemp -d "${TMPDIR:-/tmp}/weir-sign.XXXXXX")
trap 'rm -rf "$K"' EXIT
fail() { echo "FATAL: $*" >&2; exit 1; }

ssh-keygen -q -t ed25519 -N '' -C release@weir-pki.dev -f "$K/release"
printf 'release@weir-pki.dev namespaces="weir-release" %s\n' "$(cat "$K/release.pub")" >"$K/allowed_signers"
WEIR_RELEASE_KEY=$K/release bash "$REPO/deploy/sign.sh" "$DIR" >/dev/null
[ -s "$DIR/SHA256SUMS.sig" ] || fail "sign.sh wrote no SHA256SUMS.sig"

# The user's commands, verbatim, in a directory holding the download.
mkdir "$K/download"
cp "$DIR"/* "$K/download/"
cp "$K/allowed_signers" "$K/download/allowed_signers"
(
	cd "$K/download"
	ssh-keygen -Y verify -f allowed_signers -I release@weir-pki.dev -n weir-release -s SHA256SUMS.sig < SHA256SUMS
	sha256sum -c --ignore-missing SHA256SUMS
) || fail "the verification commands of docs/releases.md failed on a good release"

verify() { # $1: SHA256SUMS file, $2: signature, $3: allowed_signers, $4: namespace
	ssh-keygen -Y verify -f "$3" -I release@weir-pki.dev -n "$4" -s "$2" <"$1" >/dev/null 2>&1
}
# SHA256SUMS with one byte changed (one hex digit of the first sum).
cp "$DIR/SHA256SUMS" "$K/tampered"
first=$(head -c1 "$K/tampered")
[ "$first" = 0 ] && repl=1 || repl=0
printf '%s' "$repl" | dd of="$K/tampered" bs=1 seek=0 count=1 conv=notrunc 2>/dev/null
cmp -s "$K/tampered" "$DIR/SHA256SUMS" && fail "the tampered copy is unchanged"
verify "$K/tampered" "$DIR/SHA256SUMS.sig" "$K/allowed_signers" weir-release && fail "a changed SHA256SUMS verified"
# An artefact changed after signing: the signature holds, the sum does not.
f=$(awk 'NR==1{print $2}' "$DIR/SHA256SUMS")
printf 'x' >>"$K/download/$f"
(cd "$K/download" && sha256sum -c --ignore-missing --quiet SHA256SUMS >/dev/null 2>&1) && fail "a changed $f passed sha256sum -c"
# The right key under another namespace (e.g. a git commit signature).
cp "$DIR/SHA256SUMS" "$K/other"
ssh-keygen -q -Y sign -f "$K/release" -n git "$K/other"
verify "$K/other" "$K/other.sig" "$K/allowed_signers" weir-release && fail "a signature of namespace git verified as weir-release"
# Another key: not in allowed_signers.
ssh-keygen -q -t ed25519 -N '' -C mallory -f "$K/mallory"
cp "$DIR/SHA256SUMS" "$K/mallory-sums"
ssh-keygen -q -Y sign -f "$K/mallory" -n weir-release "$K/mallory-sums"
verify "$K/mallory-sums" "$K/mallory-sums.sig" "$K/allowed_signers" weir-release && fail "a signature by a key not in allowed_signers verified"
echo "signature: verified as documented; refused for a changed SHA256SUMS, a changed file, namespace git and another key"
