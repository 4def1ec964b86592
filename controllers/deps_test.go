package controllers_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCABPKRenderers: CABPK's renderers and reconciler are test oracles
// only; the controller and the manager must not link them.
func TestNoCABPKRenderers(t *testing.T) {
	forbidden := []string{
		"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit",
		"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition",
		"sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers/",
	}
	for _, pkg := range []string{"github.com/nodeboot/nodeboot/controllers", "github.com/nodeboot/nodeboot/cmd/manager"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
