#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The SBOMs' check, as CI runs it: for each binary of each release tarball
# in DIR, its SBOM (BIN_VERSION_linux_ARCH.cdx.json) must be CycloneDX 1.6
# JSON naming github.com/weir-pki/weir under Apache-2.0 with the binary's
# platform, and must list exactly the modules the binary was linked from, at
# the same versions, as the binary's own build information says
# (go version -m), each with a license, plus the Go standard library.
#
# Usage: bash deploy/sbom-test.sh DIR
set -euo pipefail
export LC_ALL=C

DIR=$(cd "${1:?usage: sbom-test.sh DIR}" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/weir-sbom.XXXXXX")
trap 'rm -rf "$W"' EXIT
n=0
for t in "$DIR"/weir_*_linux_*.tar.gz; do
	name=$(basename "$t" .tar.gz)
	rest=${name#weir_}
	version=${rest%_linux_*}
	arch=${rest##*_linux_}
	tar -xzf "$t" -C "$W"
	for bin in weir weir-load; do
		sbom=$DIR/${bin}_${version}_linux_$arch.cdx.json
		[ -f "$sbom" ] || { echo "FATAL: no SBOM $sbom for $name/$bin" >&2; exit 1; }
		go version -m "$W/$name/$bin" | awk '$1 == "dep" { print $2 "@" $3 } $1 == "=>" { print "replaced " $2 "@" $3 }' >"$W/deps"
		if grep -q '^replaced ' "$W/deps"; then
			echo "FATAL: $name/$bin has replaced modules; compare them by hand" >&2
			exit 1
		fi
		python3 - "$sbom" "$W/deps" "$arch" "$bin" <<'PY'
import json, sys
sbom, deps, arch, binname = sys.argv[1:5]
d = json.load(open(sbom))
def fail(msg):
    sys.exit(f"FATAL: {sbom}: {msg}")
if d.get("bomFormat") != "CycloneDX" or d.get("specVersion") != "1.6":
    fail(f"not CycloneDX 1.6: {d.get('bomFormat')} {d.get('specVersion')}")
if "serialNumber" in d or "timestamp" in d.get("metadata", {}):
    fail("has a serial number or timestamp: two builds would differ")
main = d["metadata"]["component"]
if main["name"] != "github.com/weir-pki/weir":
    fail(f"main component is {main['name']}")
lic = [l["license"].get("id") for l in main.get("evidence", {}).get("licenses", [])]
if lic != ["Apache-2.0"]:
    fail(f"main component's license is {lic}, want Apache-2.0")
if f"goarch={arch}" not in main["purl"] or f"#cmd/{binname}" not in main["purl"]:
    fail(f"main component {main['purl']} is not cmd/{binname} for {arch}")
want = set(open(deps).read().split())
got, unlicensed = set(), []
for c in d["components"]:
    if c["name"] == "std":
        continue
    got.add(c["name"] + "@" + c["version"])
    if not c.get("evidence", {}).get("licenses") and not c.get("licenses"):
        unlicensed.append(c["name"])
if not any(c["name"] == "std" for c in d["components"]):
    fail("no Go standard library component")
if got != want:
    fail(f"modules differ from the binary's: only in the SBOM {sorted(got - want)}, only in the binary {sorted(want - got)}")
if unlicensed:
    fail(f"no license found for {unlicensed}")
print(f"{sbom.rsplit('/', 1)[1]}: {len(got)} modules, as linked into the binary, each with a license")
PY
		n=$((n + 1))
	done
done
[ "$n" -gt 0 ] || { echo "FATAL: no release tarballs in $DIR" >&2; exit 1; }
