# SPDX-License-Identifier: Apache-2.0

# Sourced by the deploy scripts: need_tools WHO CMD:PACKAGE... makes sure
# every command is on PATH. Under CI=true the missing ones are installed
# with apt-get (and a command still missing fails the run); otherwise a
# missing command is an error that names the packages to install.
need_tools() {
	local who=$1 pair missing=()
	shift
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	if [ "${CI:-}" != "true" ]; then
		printf 'FATAL: %s: missing: %s (apt-get install -y %s, or run with CI=true)\n' "$who" "${missing[*]}" "${missing[*]}" >&2
		exit 1
	fi
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 && continue
		printf 'FATAL: %s: %s is still missing after apt-get install %s\n' "$who" "${pair%%:*}" "${pair#*:}" >&2
		exit 1
	done
}
