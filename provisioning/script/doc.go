// Package script renders a provisioning.Plan as one POSIX shell script, for
// images that have neither cloud-init nor Ignition and for user-data channels
// that run a "#!" script (cloud-init itself runs such user data once).
//
// It is the third provisioner and deliberately the smallest: it imports only
// provisioning and the standard library, so its size is what adding a
// provisioner to nodeboot costs. Everything the Plan says becomes a few lines
// of shell over a handful of helper functions written once at the top of the
// script; data is never interpolated into code: file contents travel in
// quoted here-documents (base64 when they are not plain text), every other
// value as a single-quoted word.
//
// The script stops at the first failure. Each command runs in its own
// "/bin/sh -e -c", and a failing one ends the script with that command's exit
// code; the sentinel is written only after the bootstrap command succeeded.
// A feature a shell script cannot express reliably across images (NTP,
// disks, mounts, additional config, compression, per-node values from the
// instance metadata, user data other than a shell script) is an error
// naming the feature, never dropped. A shell-script UserData runs after the
// Plan's commands. docs/script-provisioner.md is the full contract.
package script
