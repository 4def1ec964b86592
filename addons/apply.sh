#!/bin/sh
# nodeboot first-boot add-ons, run once right after kubeadm init.
# Fetches URL sources, verifies every manifest's sha256 before applying any,
# waits (bounded) for the API server, applies each manifest with server-side
# apply under the field manager "nodeboot" (no attempt past the deadline,
# NODEBOOT_ADDONS_TIMEOUT, none that outlives it), and records names, versions,
# digests, objects and results in ConfigMap kube-system/nodeboot-addons.
# Running it again changes nothing. $1, when given, is the index's sha256.
# A traced shell (sh -x, or SHELLOPTS=xtrace handed down to bash as sh)
# would print what commands read: no tracing here.
set -u +x
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
# ends at the first '/' after "://"; drop it up to its last '@'; without
# "://", drop everything up to the last '@'.
redact() {
	r=${1%%[?#]*}
	case $r in
	*://*)
		scheme=${r%%://*}
		rest=${r#*://}
		auth=${rest%%/*}
		r=$scheme://${auth##*@}${rest#"$auth"}
		;;
	*) r=${r##*@} ;;
	esac
	printf '%s' "$r"
}

# bounded SECS CMD... runs CMD, stopped after SECS seconds: by timeout(1)
# where it takes "timeout SECS CMD" (an older BusyBox's takes -t SECS only),
# else by a watchdog. CMD keeps the caller's standard input, which a shell
# otherwise replaces with /dev/null for a command it starts in the background.
bounded() {
	b=$1
	shift
	if [ "$has_timeout" = 1 ]; then
		timeout "$b" "$@"
		return
	fi
	{ "$@" <&3 3<&- & } 3<&0
	bp=$!
	(sleep "$b"; kill "$bp") >/dev/null 2>&1 &
	bw=$!
	wait "$bp"
	b=$?
	kill "$bw" 2>/dev/null
	return $b
}
has_timeout=0
timeout 5 true >/dev/null 2>&1 && has_timeout=1

# get URL OUT CA TOKEN is one attempt of fetch, in a subshell so the trust
# it sets up stays in it, ended within the time the step has left (at most
# 120 s). CA, when given, is the only trust, whatever the system store,
# SSL_CERT_FILE, SSL_CERT_DIR or CURL_CA_BUNDLE say. TOKEN, a file, holds a
# credential sent as a bearer token: it reaches the 0600 configuration file
# without being a shell word, no redirect is followed, and BusyBox wget,
# which cannot verify a server, is not used. Without one, a redirect is
# followed: the manifest is pinned by its sha256 anyway.
get() (
	t=$(left)
	# The clock may have moved since the caller looked: 0 would be no
	# limit at all to curl, wget and timeout.
	[ "$t" -gt 0 ] || exit 1
	[ "$t" -le 120 ] || t=120
	cfg=$work/fetch.conf
	rm -rf "$work/ca"
	mkdir "$work/ca"
	if [ -n "$3" ]; then
		SSL_CERT_FILE=$3 SSL_CERT_DIR=$work/ca CURL_CA_BUNDLE=$3
		export SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE
	fi
	if command -v curl >/dev/null 2>&1; then
		# -L with no redirect allowed: a redirect is an error, not a body.
		follow=-L
		: >"$cfg"
		if [ -n "$4" ]; then
			follow='-L --max-redirs 0'
			{ printf 'header = "Authorization: Bearer '; tr -d '\r\n' <"$4"; echo '"'; } >"$cfg"
		fi
		curl -q -fsS $follow --connect-timeout 10 --max-time "$t" ${3:+--cacert "$3" --capath "$work/ca"} -K "$cfg" -o "$2" "$1"
	elif wget --version 2>/dev/null | grep -q 'GNU Wget'; then
		{
			echo 'check_certificate = on'
			if [ -n "$4" ]; then
				printf 'header = Authorization: Bearer '
				tr -d '\r\n' <"$4"
				echo
			fi
		} >"$cfg"
		bounded "$t" wget --config="$cfg" -q --timeout="$t" --tries=1 ${4:+--max-redirect=0} \
			${3:+"--ca-certificate=$3" "--ca-directory=$work/ca"} -O "$2" "$1"
	elif [ -z "$3$4" ]; then
		# BusyBox wget: Debian's crashes on -T; bounded stops it instead.
		bounded "$t" wget -q -O "$2" "$1"
	else
		log "$(redact "$1"): no curl or GNU wget, and BusyBox wget cannot verify the server"
		exit 2
	fi
)

# fetch URL FILE [CA [TOKEN]] fetches URL into FILE with retries.
fetch() {
	n=0
	case $1 in
	https://*) ;;
	*)
		if [ -n "${4:-}" ]; then
			log "$(redact "$1"): a credential goes over https only"
			return 1
		fi
		;;
	esac
	while [ "$n" -lt 5 ] && [ "$(left)" -gt 0 ]; do
		get "$1" "$2.part" "${3:-}" "${4:-}"
		r=$?
		rm -f "$work/fetch.conf"
		[ "$r" = 0 ] && mv "$2.part" "$2" && return 0
		[ "$r" = 2 ] && break
		n=$((n + 1))
		log "fetching $(redact "$1") failed (attempt $n)"
		[ "$(left)" -le 0 ] || sleep $((n * 2))
	done
	rm -f "$2.part"
	return 1
}

record() {
	set --
	while IFS="$tab" read -r name version digest file url ca tok; do
		set -- "$@" "--from-literal=$name.version=$version" "--from-literal=$name.sha256=$digest" \
			"--from-file=$name.result=$work/$name.result"
		[ -f "$work/$name.objects" ] && set -- "$@" "--from-file=$name.objects=$work/$name.objects"
	done <"$index"
	# Written even after the deadline (it says what failed), within 30 s.
	t=$(left)
	[ "$t" -ge 30 ] || t=30
	"$kubectl" create configmap nodeboot-addons --namespace kube-system "$@" --dry-run=client -o yaml </dev/null |
		bounded "$t" "$kubectl" apply --server-side --field-manager=nodeboot --request-timeout="${t}s" -f - >/dev/null ||
		{ log "could not record results in ConfigMap kube-system/nodeboot-addons"; return 1; }
}

if [ -n "${1:-}" ] && [ "$(sum "$index")" != "$1" ]; then
	log "$index: sha256 does not match $1; refusing to apply anything"
	exit 1
fi

# Verify everything before applying anything.
bad=0
while IFS="$tab" read -r name version digest file url ca tok; do
	path=$dir/$file
	cafile= tokfile=
	[ -n "$ca" ] && [ "$ca" != "-" ] && cafile=$dir/$ca
	[ -n "$tok" ] && tokfile=$dir/$tok
	if [ "$url" != "-" ] && [ ! -f "$path" ] && ! fetch "$url" "$path" "$cafile" "$tokfile" </dev/null; then
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
	while IFS="$tab" read -r name version digest file url ca tok; do
		[ -f "$work/$name.result" ] || result "$name" "not applied: another add-on failed verification"
	done <"$index"
	record
	exit 1
fi

failed=0
while IFS="$tab" read -r name version digest file url ca tok; do
	ok=0 n=0
	: >"$work/$name.err"
	while [ "$n" -lt 5 ]; do
		# No attempt without time left, and none that outlives the step:
		# kubectl has no overall deadline of its own.
		t=$(left)
		if [ "$t" -le 0 ]; then
			echo "the step's ${timeout}s ran out" >>"$work/$name.err"
			break
		fi
		if bounded "$t" "$kubectl" apply --server-side --field-manager=nodeboot --request-timeout="${t}s" -f "$dir/$file" -o name \
			>"$work/$name.objects" 2>"$work/$name.err" </dev/null; then
			ok=1
			break
		fi
		n=$((n + 1))
		s=$((n * 2)) t=$(left)
		[ "$t" -gt 0 ] || continue
		[ "$s" -le "$t" ] || s=$t
		sleep "$s"
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
