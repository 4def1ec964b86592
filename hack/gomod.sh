#!/usr/bin/env bash
# hack/gomod.sh GO-ARGS... -- DIR...
#
# The repository holds two Go modules: the root one and the library in
# provisioning/ (a go.mod of its own, so providers import it without taking
# the root's pins). A pattern given to the go command in one module cannot
# name a package of the other, so this runs `$GO -C MODULE GO-ARGS... PKG...`
# once per module, giving each DIR (a package directory relative to the
# repository root, ./dir/ or dir) to the module it belongs to: the nearest
# directory above it with a go.mod. It goes on after a failing module and
# exits non-zero if any failed. GO (default go) is read from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

go=${GO:-go}
args=()
while (($#)) && [[ $1 != -- ]]; do
	args+=("$1")
	shift
done
(($#)) && shift
(($#)) || { echo "usage: hack/gomod.sh GO-ARGS... -- DIR..." >&2; exit 2; }

declare -A pkgs=()
order=()
for d in "$@"; do
	d=${d#./}
	d=${d%/}
	m=$d
	while [[ $m != . && ! -e $m/go.mod ]]; do
		m=$(dirname "$m")
	done
	rel=${d#"$m"}
	rel=./${rel#/}
	[[ -v "pkgs[$m]" ]] || order+=("$m")
	pkgs[$m]+=" ${rel%/}/"
done
rc=0
for m in "${order[@]}"; do
	read -ra list <<<"${pkgs[$m]}"
	$go -C "$m" "${args[@]}" "${list[@]}" || rc=1
done
exit $rc
