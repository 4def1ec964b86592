#!/usr/bin/env bash
# hack/rehearse-fresh-ci.sh [--home DIR [--warm]] [--keep-modules] [--ref REF]
#
# Runs CI as a fresh machine would: a clean clone of REF (default HEAD) next
# to ../shared, and `CI=true bash .ci/run` with HOME pointed at an empty
# directory, so every cache .ci/run relies on starts empty: the Go build
# cache, $HOME/.cache/nodeboot-tools (golangci-lint), the envtest binaries,
# the validators (cloud-init root, Ignition), the e2e assets. A tool that is
# cached on this machine cannot hide a missing install step here.
#
#   --home DIR       use DIR as HOME (must be empty or absent; kept afterwards,
#                    so a second run with --warm measures a warm CI)
#   --warm           reuse the HOME an earlier rehearsal left in DIR
#   --keep-modules   reuse this machine's Go module download cache (downloads
#                    only, nothing the project builds); saves bandwidth, not CPU
#   --ref REF        the commit to clone (default HEAD; uncommitted work is
#                    not part of a rehearsal, as it is not part of CI)
#
# Debian packages cannot be uninstalled for the rehearsal: .ci/run installs
# the ones it needs, and a package that is already present is not proven.
# Prints the wall time at the end; the log is in $WORK/ci.log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$top/../shared" && pwd)
home="" keep_modules=0 ref=HEAD warm=0
while (($#)); do
	case $1 in
	--home) home=$2; shift 2 ;;
	--keep-modules) keep_modules=1; shift ;;
	--warm) warm=1; shift ;;
	--ref) ref=$2; shift 2 ;;
	*) echo "usage: $0 [--home DIR [--warm]] [--keep-modules] [--ref REF]" >&2; exit 2 ;;
	esac
done

work=$(mktemp -d /tmp/rehearse-ci.XXXXXX)
if [[ -z $home ]]; then home=$work/home; fi
mkdir -p "$home"
if ((warm)); then
	if [[ ! -d $home/.cache ]]; then
		echo "rehearse: --warm needs the HOME of an earlier rehearsal in $home" >&2
		exit 2
	fi
elif [[ -n $(ls -A "$home") ]]; then
	echo "rehearse: $home is not empty; a rehearsal starts from nothing (--warm reuses it)" >&2
	exit 2
fi
home=$(cd "$home" && pwd)

git clone -q --no-local "$top" "$work/main"
git -C "$work/main" checkout -q "$(git -C "$top" rev-parse "$ref")"
ln -s "$shared" "$work/shared"

env=(HOME="$home" CI=true)
if ((keep_modules)); then env+=(GOMODCACHE="$(go env GOMODCACHE)"); fi

echo "rehearse: $(git -C "$work/main" log -1 --format='%h %s') in $work/main, HOME=$home"
start=$SECONDS
rc=0
(cd "$work/main" && env "${env[@]}" bash .ci/run) >"$work/ci.log" 2>&1 || rc=$?
elapsed=$((SECONDS - start))
grep -E '^== ' "$work/ci.log" || true
tail -n 5 "$work/ci.log"
printf 'rehearse: .ci/run exited %d after %dm%02ds (log: %s)\n' "$rc" $((elapsed / 60)) $((elapsed % 60)) "$work/ci.log"
exit "$rc"
