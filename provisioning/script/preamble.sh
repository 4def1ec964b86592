#!/bin/sh
# First-boot script rendered by nodeboot (format "script"). Run it once, as
# root. It stops at the first failure with that step's exit code, and writes
# the sentinel only when the bootstrap command succeeded.
set -e
umask 077
cd /
nb_say() { printf 'nodeboot: %s\n' "$*" >&2; }
nb_need() {
	for nb_c in "$@"; do
		command -v "$nb_c" >/dev/null 2>&1 || { nb_say "$nb_c is required and not installed"; exit 127; }
	done
}
# nb_run LABEL SCRIPT: one command in its own shell with -e and the usual
# umask 022 (files this script writes start owner-only until their mode is
# set); its failure ends this script with the command's exit code.
nb_run() {
	nb_say "run $1"
	(umask 022 && exec /bin/sh -e -c "$2" "$1") || { nb_rc=$?; nb_say "$1 failed with exit code $nb_rc"; exit "$nb_rc"; }
}
# nb_script LABEL FILE: a user's script, run by its own "#!" interpreter
# after the Plan's commands; its failure ends this script with its code.
nb_script() {
	nb_say "run $1"
	(umask 022 && exec "$2") || { nb_rc=$?; nb_say "$1 failed with exit code $nb_rc"; exit "$nb_rc"; }
}
nb_dir() { [ -z "$1" ] || [ -d "$1" ] || (umask 022 && mkdir -p "$1"); }
# nb_file PATH MODE write|append text|base64|gzip: the content is on stdin;
# the mode is set before any byte is written.
nb_file() {
	nb_dir "${1%/*}"
	if [ "$3" != append ] || [ ! -e "$1" ]; then : >"$1"; fi
	chmod "$2" "$1"
	case $4 in
	text) cat >>"$1" ;;
	base64) base64 -d >>"$1" ;;
	gzip) base64 -d | gzip -dc >>"$1" ;;
	esac
}
nb_group() { getent group "$1" >/dev/null || groupadd "$1"; }
# nb_keys USER: appends the keys on stdin to the user's authorized_keys.
nb_keys() {
	nb_home=$(getent passwd "$1" | cut -d: -f6)
	[ -n "$nb_home" ] || { nb_say "user $1 has no home directory"; exit 1; }
	nb_dir "$nb_home/.ssh"
	cat >>"$nb_home/.ssh/authorized_keys"
	chmod 0700 "$nb_home/.ssh"
	chmod 0600 "$nb_home/.ssh/authorized_keys"
	chown "$1:$(id -g "$1")" "$nb_home/.ssh" "$nb_home/.ssh/authorized_keys"
}
# nb_units: reloads systemd when it runs; nb_unit enable|disable|try-restart
# NAME, and disable then stops the unit too, try-restart restarts it only if
# it runs and only while systemd does; nb_start NAME (re)starts an enabled unit
# after the pre commands, which may install its binary. Without systemctl,
# units are only written.
nb_units() {
	if ! command -v systemctl >/dev/null 2>&1; then
		nb_sysd=none
		nb_say "systemctl not found: unit files written, not enabled or disabled"
	elif [ -d /run/systemd/system ]; then
		nb_sysd=running
		systemctl daemon-reload
	else
		nb_sysd=offline
		nb_say "systemd is not running: units are enabled or disabled, not started or stopped"
	fi
}
nb_unit() {
	case $nb_sysd-$1 in
	running-enable | running-try-restart) systemctl "$1" "$2" ;;
	*-try-restart) ;;
	running-*) systemctl "$1" --now "$2" ;;
	offline-*) SYSTEMD_OFFLINE=1 systemctl "$1" "$2" ;;
	esac
}
nb_start() { [ "$nb_sysd" != running ] || systemctl restart "$1"; }
