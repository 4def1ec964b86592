#!/bin/sh
# nodeboot first-boot add-ons, run once right after kubeadm init.
# Fetches URL sources, verifies every manifest's sha256 before applying any,
# waits (bounded) for the API server, applies each manifest with server-side
# apply under the field manager "nodeboot", and records names, versions,
# digests, objects and results in ConfigMap kube-system/nodeboot-addons.
# Running it again changes nothing. $1, when given, is the index's sha256.
set -u
umask 077
dir=${NODEBOOT_ADDONS_DIR:-$(dirname "$0")}
KUBECONFIG=${NODEBOOT_ADDONS_KUBECONFIG:-/etc/kubernetes/admin.conf}
export KUBECONFIG
timeout=${NODEBOOT_ADDONS_TIMEOUT:-300}
kubectl=${NODEBOOT_KUBECTL:-kubectl}
PATH=$PATH:/opt/bin:/usr/local/bin
index=$dir/addons.list
deadline=$(($(date +%s) + timeout))
tab=$(printf '\t')
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

log() { echo "nodeboot-addons: $*" >&2; }
left() { echo $((deadline - $(date +%s))); }
result() { printf '%s' "$2" >"$work/$1.result"; }
sum() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

# redact prints a URL fit for logs and the record: without its query,
# fragment and userinfo (presigned URL signatures, basic-auth passwords).
# Same rules as addons.RedactURL: cut at the first '?' or '#'; the authority
# ends at the first '/' after "://"; drop it up to its last '@'.
redact() {
	r=${1%%[?#]*}
	case $r in
	*://*)
		scheme=${r%%://*}
		rest=${r#*://}
		auth=${rest%%/*}
		r=$scheme://${auth##*@}${rest#"$auth"}
		;;
	esac
	printf '%s' "$r"
}

# fetch URL FILE [CA]: CA, when given, is the only trust for the server
# (the manager's serving CA when add-ons come from its fetch endpoint).
fetch() {
	n=0 f_ca=${3:-}
	while [ "$n" -lt 5 ] && [ "$(left)" -gt 0 ]; do
		if command -v curl >/dev/null 2>&1; then
			curl -fsSL --connect-timeout 10 --max-time 120 ${f_ca:+--cacert "$f_ca"} -o "$2.part" "$1" && mv "$2.part" "$2" && return 0
		else
			wget -q -T 30 -t 1 ${f_ca:+"--ca-certificate=$f_ca"} -O "$2.part" "$1" && mv "$2.part" "$2" && return 0
		fi
		n=$((n + 1))
		log "fetching $(redact "$1") failed (attempt $n)"
		sleep $((n * 2))
	done
	rm -f "$2.part"
	return 1
}

record() {
	set --
	while IFS="$tab" read -r name version digest file url ca; do
		set -- "$@" "--from-literal=$name.version=$version" "--from-literal=$name.sha256=$digest" \
			"--from-file=$name.result=$work/$name.result"
		[ -f "$work/$name.objects" ] && set -- "$@" "--from-file=$name.objects=$work/$name.objects"
	done <"$index"
	"$kubectl" create configmap nodeboot-addons --namespace kube-system "$@" --dry-run=client -o yaml </dev/null |
		"$kubectl" apply --server-side --field-manager=nodeboot -f - >/dev/null ||
		{ log "could not record results in ConfigMap kube-system/nodeboot-addons"; return 1; }
}

if [ -n "${1:-}" ] && [ "$(sum "$index")" != "$1" ]; then
	log "$index: sha256 does not match $1; refusing to apply anything"
	exit 1
fi

# Verify everything before applying anything.
bad=0
while IFS="$tab" read -r name version digest file url ca; do
	path=$dir/$file
	cafile=
	[ -n "$ca" ] && [ "$ca" != "-" ] && cafile=$dir/$ca
	if [ "$url" != "-" ] && [ ! -f "$path" ] && ! fetch "$url" "$path" $cafile </dev/null; then
		log "$name: cannot fetch $(redact "$url")"
		result "$name" "failed: cannot fetch $(redact "$url")"
		bad=1
		continue
	fi
	got=$(sum "$path")
	if [ "$got" != "$digest" ]; then
		log "$name: $path has sha256 ${got:-none}, want $digest; refusing to apply anything"
		result "$name" "failed: sha256 mismatch: got ${got:-none}"
		[ "$url" = "-" ] || rm -f "$path"
		bad=1
	fi
done <"$index"

until "$kubectl" get --raw=/readyz --request-timeout=5s >/dev/null 2>&1 </dev/null; do
	if [ "$(left)" -le 0 ]; then
		log "API server not ready after ${timeout}s (kubeconfig $KUBECONFIG); nothing applied"
		exit 1
	fi
	sleep 2
done

if [ "$bad" = 1 ]; then
	while IFS="$tab" read -r name version digest file url ca; do
		[ -f "$work/$name.result" ] || result "$name" "not applied: another add-on failed verification"
	done <"$index"
	record
	exit 1
fi

failed=0
while IFS="$tab" read -r name version digest file url ca; do
	ok=0 n=0
	while [ "$n" -lt 5 ]; do
		if "$kubectl" apply --server-side --field-manager=nodeboot -f "$dir/$file" -o name \
			>"$work/$name.objects" 2>"$work/$name.err" </dev/null; then
			ok=1
			break
		fi
		n=$((n + 1))
		[ "$(left)" -gt 0 ] || break
		sleep $((n * 2))
	done
	if [ "$ok" = 1 ]; then
		log "$name: applied $(wc -l <"$work/$name.objects") objects"
		result "$name" applied
	else
		log "$name: apply failed: $(cat "$work/$name.err")"
		result "$name" "failed: $(tail -c 400 "$work/$name.err" | tr '\n' ' ')"
		rm -f "$work/$name.objects"
		failed=1
	fi
done <"$index"
record || failed=1
exit "$failed"
