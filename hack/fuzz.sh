#!/usr/bin/env bash
# hack/fuzz.sh list | run FUZZTIME [REGEXP]
#
# Every fuzz function in the repository, found in the source, so a new
# fuzzer is fuzzed without anyone editing a list (test/makefile checks the
# list against go/parser). `list` prints "package-dir FuzzName" lines; `run`
# fuzzes each for FUZZTIME (a duration, or Nx for N inputs) from its
# committed corpus (testdata/fuzz/FuzzName) and goes on after a failure, so
# one run reports every failing fuzzer; it exits non-zero if any failed.
# REGEXP (grep -E) picks some of the "package-dir FuzzName" lines.
# New interesting inputs land in $(go env GOCACHE)/fuzz, a crasher in the
# package's testdata/fuzz, where it becomes a seed once committed.
#
# GO (default go) and FUZZMINIMIZETIME (default 10s) are read from the
# environment.
set -euo pipefail
cd "$(dirname "$0")/.."

# A fuzz target is `func FuzzXxx(f *testing.F)` at the start of a line in a
# _test.go file (gofmt's layout).
list() {
	local f
	git ls-files --cached --others --exclude-standard -- '*_test.go' | sort | while read -r f; do
		[[ -f $f ]] || continue
		sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$f" | while read -r name; do
			printf '%s %s\n' "$(dirname "$f")" "$name"
		done
	done | sort -u
}

# module prints the directory of the Go module that holds package directory
# $1 (the nearest one above it with a go.mod): the library in provisioning/
# is a module of its own, which a pattern given in the root cannot name.
module() {
	local m=$1
	while [[ $m != . && ! -e $m/go.mod ]]; do
		m=$(dirname "$m")
	done
	printf '%s\n' "$m"
}

# crashers lists the fuzzer's corpus files: a failing input is written there.
crashers() {
	ls "$1/testdata/fuzz/$2" 2>/dev/null || true
}

case ${1:-} in
list) list ;;
run)
	fuzztime=${2:?usage: hack/fuzz.sh run FUZZTIME}
	go=${GO:-go}
	failed=()
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	while read -r dir name; do
		printf '== %s %s (%s)\n' "$dir" "$name" "$fuzztime"
		# A pattern that matches no fuzzer (one behind a build tag) fuzzes
		# nothing and passes: that is a failure here. vet is make lint's job,
		# not repeated before each fuzzer.
		before=$(crashers "$dir" "$name")
		mod=$(module "$dir")
		rel=${dir#"$mod"}
		if $go -C "$mod" test -vet=off -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" \
			-fuzzminimizetime "${FUZZMINIMIZETIME:-10s}" "./${rel#/}/" </dev/null 2>&1 | tee "$log"; then
			if grep -q 'no fuzz tests to fuzz' "$log"; then
				failed+=("$dir $name")
			fi
		elif [[ $(crashers "$dir" "$name") == "$before" ]] && grep -q '^    context deadline exceeded$' "$log"; then
			# Go's coordinator can report its own -fuzztime deadline as a
			# failure (go.dev/issue/75804, fixed in Go 1.27); no input
			# failed, so no crasher was written.
			echo "fuzz.sh: $dir $name: deadline race of the Go fuzzer (go.dev/issue/75804), not a failing input"
		else
			failed+=("$dir $name")
		fi
	done < <(list | grep -E -- "${3:-.}")
	if ((${#failed[@]})); then
		printf 'FAIL: %s\n' "${failed[@]}" >&2
		exit 1
	fi
	;;
*)
	echo "usage: hack/fuzz.sh list | run FUZZTIME [REGEXP]" >&2
	exit 2
	;;
esac
