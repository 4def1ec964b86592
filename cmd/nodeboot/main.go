// Command nodeboot renders, offline, the bootstrap data Cluster API machines
// boot from: the same bytes nodeboot's controller (and, for existing objects,
// Cluster API's kubeadm bootstrap provider) writes into the bootstrap Secret.
package main

import (
	"fmt"
	"io"
	"os"

	_ "github.com/nodeboot/nodeboot/cloudinit"
	_ "github.com/nodeboot/nodeboot/ignition"
	"github.com/nodeboot/nodeboot/internal/version"
)

const usage = `nodeboot renders node bootstrap data offline.

Usage:
  nodeboot render [-f FILE|-] [--name NAME] [-o DIR] [--sizes] [--strict]
  nodeboot version

  Without -f it renders an embedded example (a first control-plane node).
  FILE is multi-document YAML: the Cluster, the Machine or MachinePool, the
  KubeadmConfig and the Secrets it uses, as kubectl get -o yaml prints them.
  The KubeadmConfig's spec.format picks cloud-config or Ignition; the
  annotation nodeboot.dev/ignition-version (3.3.0, 3.4.0, 3.5.0) picks native
  Ignition v3, nodeboot.dev/cloud-init-corrections: "true" corrected cloud-config.
  Hazards CABPK renders too are warnings on standard error, one line per
  field; --strict (or nodeboot.dev/strict: "true") makes them errors.
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
