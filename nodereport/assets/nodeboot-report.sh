#!/bin/sh
# nodeboot-report: tells the management cluster how this node's first boot
# went (issue 10). The bootstrap data runs it around every command; it never
# fails the boot and never waits for the network: reports are spooled to
# disk first and sent in the background, with retries and a deadline.
#
#   started              first report; also reports a failed boot command
#   check RC STEP        after a command: RC != 0 reports STEP failed; exits RC
#   step STEP            before a command (scripts under set -e)
#   bootstep STEP        before a boot command (scripts under set -e)
#   finish RC            after the last command: succeeded once the sentinel
#                        exists and nothing failed; exits RC
#   unit-failed UNIT     OnFailure= handler of the bootstrap units
#   send                 sends the spool with backoff (background)
#   flush                sends the spool once, in the foreground
#
# The credential is read from a file and passed to curl or wget in a
# configuration file, never on a command line, in the environment or in the
# URL, and never printed. With a CA bundle only that bundle is trusted; no
# redirect is followed; every attempt has a deadline.
# NODEBOOT_REPORT_ROOT prefixes every path (to flush another root's spool);
# NODEBOOT_REPORT_DEADLINE bounds the retries in seconds (default 1800).
#
# A traced shell (sh -x, or SHELLOPTS=xtrace handed down to bash as sh)
# would print what commands read: no tracing here.
set +x
umask 077
R=${NODEBOOT_REPORT_ROOT:-}
CONF=$R/etc/nodeboot/report
STATE=$R/var/lib/nodeboot/report
SPOOL=$STATE/spool
LOCK=$R/run/nodeboot-report.lock
DEADLINE=${NODEBOOT_REPORT_DEADLINE:-1800}
case $DEADLINE in ''|*[!0-9]*) DEADLINE=1800 ;; esac
# T bounds one attempt: 30 s, and not much past the deadline.
T=30; [ "$DEADLINE" -ge 30 ] || T=$((DEADLINE + 1))
SELF=$0

say() { printf 'nodeboot-report: %s\n' "$*" >&2; }

setting() { sed -n "s/^$1=//p" "$CONF/settings" 2>/dev/null | head -n 1; }

# once NAME succeeds the first time only (mkdir is atomic).
once() { mkdir -p "$STATE" 2>/dev/null; mkdir "$STATE/once.$1" 2>/dev/null; }

failed() { [ -d "$STATE/once.failed" ]; }

sentinel_ok() {
  s=$(setting sentinel)
  [ -z "$s" ] || [ -e "$R$s" ]
}

# spool NAME BODY writes a report atomically; the sender removes it once the
# server answered.
spool() {
  mkdir -p "$SPOOL" 2>/dev/null || return 0
  # The node name (kubelet's default: the host name, lower case) tells a
  # MachinePool's instances apart; a name that is no DNS name is left out.
  n=$(uname -n 2>/dev/null | tr A-Z a-z)
  case $n in ''|*[!a-z0-9.-]*|[.-]*|*[.-]) b=$2 ;; *) b="{\"node\":\"$n\",${2#?}" ;; esac
  printf '%s' "$b" > "$SPOOL/.$1.tmp" 2>/dev/null && mv -f "$SPOOL/.$1.tmp" "$SPOOL/$1.json" 2>/dev/null
  return 0
}

# redact removes keys, tokens and passwords from a log on stdin and keeps
# its last 50 lines that are not blank, each cut at 512 bytes, JSON-escaped
# on one line. The sed program is internal/redact's table, the one the
# manager redacts with too; script.go puts it in place of @REDACTIONS@.
# LC_ALL=C: in a UTF-8 locale a byte that is not UTF-8 would end a match
# in the middle of a secret, and Fedora's, RHEL's and SUSE's cut would count
# -c in characters (three bytes each in CJK text), over the manager's 64 KiB.
redact() {
  sedf=$(mktemp "${TMPDIR:-/tmp}/nodeboot-report.XXXXXX") || return 0
  cat > "$sedf" <<'SED'
@REDACTIONS@
SED
  if [ -s "$CONF/token" ]; then
    # The credential itself, should a command have printed it.
    printf 's/%s/[redacted]/g\n' "$(cat "$CONF/token")" >> "$sedf"
  fi
  # Terminal colours (kubeadm's preflight) go whole, not as bare "[0;37m".
  tail -n 1000 | sed "s/$(printf '\033')\[[0-9;?]*[@-~]//g" | tr '\011' ' ' | tr -d '\000-\010\013-\037\177' | LC_ALL=C sed -E -f "$sedf" | tail -n 50 | LC_ALL=C cut -c 1-512 |
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/$/\\n/' | tr -d '\n'
  rm -f "$sedf"
}

# logtail prints the output a failed step left: what the unit's processes
# wrote to the journal (not systemd's own lines about the unit, such as
# "Triggering OnFailure= dependencies", which -u would add after the error),
# or the cloud-init output log. At most its last MiB, read from the end:
# a step that printed one endless line must not make a tool hold it.
logtail() {
  if [ -n "$1" ] && command -v journalctl >/dev/null 2>&1; then
    journalctl "_SYSTEMD_UNIT=$1" -b -n 1000 -o cat --no-pager 2>/dev/null | tail -c 1048576
    return 0
  fi
  log=$(setting log)
  [ -n "$log" ] && [ -r "$R$log" ] || return 0
  # Only what the failed step printed: the log grew from the offset the
  # previous step's check recorded.
  off=$(cat "$STATE/offset" 2>/dev/null)
  size=$(wc -c < "$R$log" 2>/dev/null)
  case $off in ''|*[!0-9]*) off=0 ;; esac
  case $size in ''|*[!0-9]*) size=0 ;; esac
  [ "$size" -ge "$off" ] || off=0
  [ $((size - off)) -le 1048576 ] || off=$((size - 1048576))
  tail -c +$((off + 1)) "$R$log" 2>/dev/null | head -c 1048576
  return 0
}

# offset records how far the command output log is, so that a failure
# reports only its own step's output.
offset() {
  log=$(setting log)
  [ -n "$log" ] && [ -r "$R$log" ] || return 0
  mkdir -p "$STATE" 2>/dev/null
  wc -c < "$R$log" > "$STATE/offset" 2>/dev/null
  return 0
}

# record_failure STEP RC UNIT spools the first failure only.
record_failure() {
  case $2 in ''|*[!0-9]*) set -- "$1" 1 "$3" ;; esac
  [ "$2" -le 255 ] || set -- "$1" 255 "$3"
  once failed || return 0
  # Let the output that explains the failure reach the log first.
  [ -n "$3" ] || sleep 1
  # Lines are cut before redact buffers them; it cuts them at 512 after.
  log=$(logtail "$3" | LC_ALL=C cut -c 1-4096 | redact)
  spool 2-failed "{\"phase\":\"failed\",\"step\":\"$1\",\"exitCode\":$2,\"log\":\"$log\"}"
  say "$1 exited $2; reporting the failure"
  kick
}

record_success() {
  failed && return 0
  once succeeded || return 0
  spool 3-succeeded '{"phase":"succeeded"}'
  kick
}

# kick starts a sender that outlives the caller: the sender unit under
# systemd where there is one, a detached process otherwise.
kick() {
  [ -n "${NODEBOOT_REPORT_NO_SEND:-}" ] && return 0
  if [ -z "$R" ] && [ -n "${INVOCATION_ID:-}" ] && [ "$(setting systemd)" = true ] && command -v systemctl >/dev/null 2>&1 &&
    systemctl start --no-block nodeboot-report.service >/dev/null 2>&1; then
    return 0
  fi
  if command -v setsid >/dev/null 2>&1; then
    setsid sh "$SELF" send </dev/null >/dev/null 2>&1 &
  else
    sh "$SELF" send </dev/null >/dev/null 2>&1 &
  fi
  return 0
}

# bounded SECS CMD... runs CMD, stopped after SECS seconds: by timeout
# where there is one, else by a watchdog.
bounded() {
  b=$1; shift
  if command -v timeout >/dev/null 2>&1; then timeout "$b" "$@"; return; fi
  "$@" & bp=$!
  (sleep "$b"; kill "$bp") >/dev/null 2>&1 & bw=$!
  wait "$bp"; b=$?
  kill "$bw" 2>/dev/null
  return $b
}

# post FILE sends one report; prints the HTTP status (000: no answer). A
# subshell, so the trust it sets up stays in it. With a CA bundle only the
# bundle is trusted, whatever the system store, SSL_CERT_FILE, SSL_CERT_DIR
# or CURL_CA_BUNDLE say; no redirect is followed (only the configured URL
# answers), ~/.curlrc is not read, and an attempt ends within T seconds.
# The credential reaches the 0600 configuration file without being a shell
# word. BusyBox wget cannot verify a server, so it is not used.
post() (
  url=$(cat "$CONF/url" 2>/dev/null)
  [ -n "$url" ] && [ -s "$CONF/token" ] || { echo 000; exit 0; }
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodeboot-report.XXXXXX") || { echo 000; exit 0; }
  mkdir "$tmp/ca"
  ca=
  if [ -s "$CONF/ca.crt" ]; then
    ca=$CONF/ca.crt SSL_CERT_FILE=$CONF/ca.crt SSL_CERT_DIR=$tmp/ca CURL_CA_BUNDLE=$CONF/ca.crt
    export SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE
  fi
  if command -v curl >/dev/null 2>&1; then
    { printf 'header = "Authorization: Bearer '; tr -d '\r\n' < "$CONF/token"; echo '"'; } > "$tmp/rc"
    code=$(curl -q -sS -o /dev/null -w '%{http_code}' --connect-timeout 10 --max-time "$T" ${ca:+--cacert "$ca" --capath "$tmp/ca"} \
      -K "$tmp/rc" -H 'Content-Type: application/json' --data-binary "@$1" "$url" 2>/dev/null) || code=000
  elif wget --version 2>/dev/null | grep -q 'GNU Wget'; then
    { echo 'check_certificate = on'; printf 'header = Authorization: Bearer '; tr -d '\r\n' < "$CONF/token"; echo; } > "$tmp/rc"
    bounded "$T" wget --config="$tmp/rc" -S -O /dev/null --timeout="$T" --tries=1 --max-redirect=0 \
      ${ca:+--ca-certificate="$ca" --ca-directory="$tmp/ca"} --header='Content-Type: application/json' --post-file="$1" "$url" 2>"$tmp/err"
    code=$(sed -n 's/^ *HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p' "$tmp/err" | tail -n 1)
    [ -n "$code" ] || code=000
  else
    code=none
  fi
  rm -rf "$tmp"
  echo "$code"
)

# pass sends the spooled reports in order, stopping at the first that must
# be retried (so the server sees them in order); returns 1 then, 2 when
# there is no tool to send with.
pass() {
  for f in "$SPOOL"/*.json; do
    [ -e "$f" ] || continue
    code=$(post "$f")
    name=${f##*/}
    say "${name%.json}: HTTP $code"
    case $code in
      none) return 2 ;;
      408|429) return 1 ;;
      2??|4??) rm -f "$f" ;;
      *) return 1 ;;
    esac
  done
  return 0
}

notool() { say "no curl or GNU wget (BusyBox wget cannot verify the server): reports stay in $SPOOL"; }

send() {
  mkdir -p "${LOCK%/*}" 2>/dev/null
  if ! mkdir "$LOCK" 2>/dev/null; then
    pid=$(cat "$LOCK/pid" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then return 0; fi
    rm -rf "$LOCK"; mkdir "$LOCK" 2>/dev/null || return 0
  fi
  echo $$ > "$LOCK/pid"
  trap 'rm -rf "$LOCK"' EXIT
  start=$(date +%s); delay=2
  while :; do
    pass; rc=$?
    [ $rc -eq 2 ] && { notool; break; }
    if [ $rc -eq 0 ]; then
      # A report spooled while this pass ran.
      sleep 1
      ls "$SPOOL"/*.json >/dev/null 2>&1 || break
      continue
    fi
    [ $(( $(date +%s) - start + delay )) -lt "$DEADLINE" ] || { say "giving up; reports stay in $SPOOL"; break; }
    sleep $delay
    delay=$((delay * 2)); [ $delay -le 60 ] || delay=60
  done
}

# waiter reports success when the command sequence ended without reaching
# finish (a command that exits the shell), once the sentinel exists.
waiter() {
  parent=$1; start=$(date +%s)
  while [ $(( $(date +%s) - start )) -lt 7200 ]; do
    sleep 5
    [ -e "$STATE/finished" ] && return 0
    failed && return 0
    if ! kill -0 "$parent" 2>/dev/null; then
      sleep 2
      [ -e "$STATE/finished" ] || { sentinel_ok && record_success; }
      return 0
    fi
  done
}

case ${1:-} in
  started)
    once started || exit 0
    spool 1-started '{"phase":"started"}'
    if [ -s "$STATE/bootcmd-failed" ]; then
      rm -f "$STATE/offset"
      read -r bstep brc < "$STATE/bootcmd-failed"
      record_failure "$bstep" "$brc" ""
    fi
    offset
    kick
    if [ "$(setting waiter)" = true ] && [ -z "${NODEBOOT_REPORT_NO_SEND:-}" ]; then
      (sh "$SELF" waiter "$PPID" </dev/null >/dev/null 2>&1 &)
    fi
    exit 0 ;;
  check)
    if [ "${2:-0}" = 0 ]; then offset; exit 0; fi
    record_failure "${3:-kubeadm}" "$2" ""
    exit "$2" ;;
  step|bootstep)
    mkdir -p "$STATE" 2>/dev/null
    printf '%s\n' "${2:-}" > "$STATE/$1" 2>/dev/null
    exit 0 ;;
  finish)
    mkdir -p "$STATE" 2>/dev/null; : > "$STATE/finished"
    sentinel_ok && record_success
    exit "${2:-0}" ;;
  unit-failed)
    unit=${2:-}
    rc=${MONITOR_EXIT_STATUS:-}
    case $rc in ''|*[!0-9]*) rc=$(systemctl show -P ExecMainStatus "$unit" 2>/dev/null) ;; esac
    case $rc in ''|0|*[!0-9]*) rc=1 ;; esac
    file=step
    case $unit in *bootcmd*) file=bootstep ;; esac
    st=$(cat "$STATE/$file" 2>/dev/null)
    [ -n "$st" ] || st=kubeadm
    record_failure "$st" "$rc" "$unit"
    exit 0 ;;
  send) send; exit 0 ;;
  waiter) waiter "${2:-1}"; exit 0 ;;
  flush)
    pass; rc=$?
    [ $rc -eq 2 ] && notool
    [ $rc -eq 0 ]; exit ;;
  *) say "usage: nodeboot-report started|check RC STEP|step STEP|finish RC|unit-failed UNIT|flush"; exit 0 ;;
esac
