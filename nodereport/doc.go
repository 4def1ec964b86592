// Package nodereport is the node half of bootstrap reports: it adds to a
// provisioning.Plan a small POSIX sh program, the node reporter, that tells
// the management cluster how the node's first boot went (started,
// succeeded, or failed with the step, its exit code and a redacted tail of
// its output), and wraps the Plan's commands so that every step's outcome is
// seen. Its other half is package controllers/nodereport, the manager's
// endpoint the reporter posts to (a JSON Report under its Path, with the
// config's bearer credential), which turns reports into the
// NodeBootstrapped condition; that package's Extension calls Apply for
// every KubeadmConfig.
//
// It is shaped around two facts of the targets. cloud-init runs runcmd as
// one shell script without set -e, where an export or cd in one command
// affects the next: the reporter therefore never wraps a command in a
// subshell or changes its text, it adds a line after each one that reads $?
// and hands it on unchanged. Ignition's bootstrap scripts run under set -e,
// where no line after a failing command runs: there the reporter marks each
// step before it runs, and a systemd OnFailure= handler on the bootstrap unit
// reports the step that was running when the unit failed.
//
// The program never fails or delays the boot: reports are spooled to disk
// before they are sent, and sent in the background with retries and a
// deadline; its flush mode sends a spool later. Without Apply a Plan gains
// no byte, so reporting stays off by default.
//
// Like addons, the package knows only the Plan and the standard library.
package nodereport
