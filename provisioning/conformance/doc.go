// Package conformance holds the Plans every provisioner must turn into the
// same node, and the checks that tell whether a node is that node.
//
// The Plan's meaning is written once, in package provisioning's godoc; a
// table of prose is easy to misread, so this package states it a second
// time as data: each Case is a Plan and the State a node must be in after a
// first boot with it (files with content, mode and owner; users, groups,
// the sudo rules `sudo -l -U` honours and ssh keys; units enabled with
// their drop-ins, started after the binary a pre command installs; the
// commands' log in order, showing their shell semantics; the sentinel only
// on success; the boot's exit code).
//
// A provisioner conforms when, for every Case, either the real tool that
// consumes its output (cloud-init, Ignition, a shell) produces the State,
// or Render refuses the Plan with an ErrUnsupported problem at the field of
// an Element the Case uses, and provisioning.Capabilities says so.
// Applying the output is the runner's business, because it needs the real
// tool: nodeboot's runner is test/conformance. A third-party provisioner
// runs the same Cases through its own tool and calls Case.Verify on the
// node it got. A provider holds its own Plans to the same meaning with
// FromPlan, which derives a Case's State from the Plan (Expect), so no
// expectation is written by hand; test/conformance does so for
// examples/k3s and examples/rke2.
package conformance
