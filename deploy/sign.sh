#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The release's checksums and their signature: (re)writes SHA256SUMS over
# every artefact in DIR (tarballs, .debs, SBOMs, image archives, the Helm
# chart) and, when WEIR_RELEASE_KEY names the release's SSH signing key,
# signs it into SHA256SUMS.sig with
#   ssh-keygen -Y sign -n weir-release
# A user checks a download with the release's allowed_signers file
# (docs/releases.md, "Verifying a download"):
#   ssh-keygen -Y verify -f allowed_signers -I release@weir-pki.dev -n weir-release -s SHA256SUMS.sig < SHA256SUMS
#   sha256sum -c --ignore-missing SHA256SUMS
#
# Usage: bash deploy/sign.sh DIR
# Environment:
#   WEIR_RELEASE_KEY  path of the private key (an ssh-keygen key, e.g.
#                     ed25519; a key held in ssh-agent or a FIDO token works
#                     too: give the public key's path and ssh-keygen uses
#                     the agent). Unset: SHA256SUMS only, and a warning.
set -euo pipefail
export LC_ALL=C

# The signature's namespace: a signature made for anything else (a git
# commit, a file of another project) does not verify as a weir release.
NAMESPACE=weir-release

DIR=$(cd "${1:?usage: sign.sh DIR}" && pwd)
cd "$DIR"
shopt -s nullglob
files=(*.tar.gz *.deb *.cdx.json *.oci.tar *.tgz)
[ "${#files[@]}" -gt 0 ] || { echo "sign.sh: no release artefacts in $DIR" >&2; exit 1; }
rm -f SHA256SUMS SHA256SUMS.sig
sha256sum -- "${files[@]}" >SHA256SUMS
cat SHA256SUMS
if [ -z "${WEIR_RELEASE_KEY:-}" ]; then
	echo "sign.sh: WEIR_RELEASE_KEY is not set: SHA256SUMS is not signed" >&2
	exit 0
fi
ssh-keygen -q -Y sign -f "$WEIR_RELEASE_KEY" -n "$NAMESPACE" SHA256SUMS
echo "signed: $DIR/SHA256SUMS.sig"
