// Command nodeboot renders, offline, the bootstrap data Cluster API machines
// boot from: the same bytes nodeboot's controller (and, for existing objects,
// Cluster API's kubeadm bootstrap provider) writes into the bootstrap Secret.
package main

import (
	"fmt"
	"io"
	"os"

	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	// Butane additional config for the native Ignition dialects.
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/butane"
	// Both Ignition dialects: CABPK's Ignition 2.3 and native Ignition v3.
	"github.com/nodeboot/nodeboot/internal/version"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

const usage = `nodeboot renders, validates and compares node bootstrap data offline.

Usage:
  nodeboot render [-f FILE|-] [--name NAME] [-o DIR] [--sizes] [--strict]
  nodeboot validate [-f FILE|-] [--name NAME] [--strict] [--feature-gates GATES]
  nodeboot diff [-f FILE|-] --against SECRET.yaml [--name NAME] [--diff] [--strict]
  nodeboot verify [--kubeconfig FILE] [--context C] [-n NS | --all-namespaces] [-o table|json] [--diff] [--strict]
                  [--bootstrap-report-url URL [--bootstrap-report-ca-file FILE]]
  nodeboot version

  Without -f it renders an embedded example (a first control-plane node).
  FILE is multi-document YAML: the Cluster, the Machine or MachinePool, the
  KubeadmConfig and the Secrets it uses, as kubectl get -o yaml prints them.
  The KubeadmConfig's spec.format picks cloud-config or Ignition; the
  annotation nodeboot.dev/ignition-version (3.3.0, 3.4.0, 3.5.0) picks native
  Ignition v3, nodeboot.dev/cloud-init-corrections: "true" corrected cloud-config.
  Hazards CABPK renders too are warnings on standard error, one line per
  field; --strict (or nodeboot.dev/strict: "true") makes them errors.

  validate checks every KubeadmConfig of FILE (or the one --name picks) with
  CABPK's admission webhook and nodeboot's build and render, and prints one
  line per problem and warning, never the data; it exits 1 on an error (and,
  with --strict, on a warning).

  diff renders as render does and compares with the bootstrap data Secret(s)
  in SECRET.yaml, as kubectl get secret -o yaml prints them: one line per
  KubeadmConfig (identical, differs with the first differing line, cannot
  render with the field), then a summary such as identical: 1/1. --diff adds
  a unified diff of the decoded data (Ignition indented) with private keys,
  bootstrap tokens and passwords redacted. It exits 0 only when all are
  identical.

  verify does what diff does for every KubeadmConfig of a live management
  cluster that has bootstrap data: it rebuilds the input from the live
  objects with the controller's own code (read-only: list calls, nothing is
  ever written; config/rbac/verify-role.yaml is the ClusterRole it needs)
  and compares with the stored Secret; data with a bootstrap reporter is
  rebuilt with the config's stored credential, given the manager's report
  URL and CA bundle. One line per config (identical,
  differs, cannot render, skipped with why, error), progress on standard
  error, then a summary such as identical: 85/86; it exits 0 only when
  nothing differs or fails.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "render":
		return render(args[1:], stdin, stdout, stderr)
	case "validate":
		return validate(args[1:], stdin, stdout, stderr)
	case "diff":
		return diff(args[1:], stdin, stdout, stderr)
	case "verify":
		return verify(args[1:], stdout, stderr)
	case "version", "--version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "nodeboot: version takes no arguments\n")
			return 2
		}
		fmt.Fprintln(stdout, version.Get().Line("nodeboot"))
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "nodeboot: unknown command %q\n\n%s", args[0], usage)
	return 2
}
