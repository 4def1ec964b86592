package controllers_test

import (
	"context"
	"k8s.io/utils/ptr"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

// TestInvalidInput: input that can never render gets a condition naming the
// field path, no Secret, and no hot retry loop (reconcile.TerminalError).
func TestInvalidInput(t *testing.T) {
	ns := newNamespace(t, "invalid")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	var reconciles countingReconciles
	startManager(t, managerOptions{provider: nodeboot, namespaces: []string{ns}, wrap: reconciles.wrap})
	spec := testSpec(worker, true)
	spec.JoinConfiguration.Discovery.BootstrapToken.Token = "abcdef.0123456789abcdef"
	// CABPK renders a relative path as cloud-config, but its Ignition
	// transpiler refuses it: the plan validation catches it there, and the
	// webhook would not have.
	spec.Format = bootstrapv1.Ignition
	spec.Users[0].LockPassword = ptr.To(false)
	spec.Files = append(spec.Files, bootstrapv1.File{Path: "etc/relative", Content: "x", Permissions: "0644"})
	createMachine(t, ns, "bad", worker, spec)

	ctx := context.Background()
	var msg string
	eventually(t, 30*time.Second, "a DataSecretAvailable condition naming the field", func() (bool, error) {
		c, err := getConfig(ctx, ns, "bad")
		if err != nil {
			return false, err
		}
		cond := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
		if cond == nil || cond.Status != "False" {
			return false, nil
		}
		msg = cond.Message
		return strings.Contains(msg, "spec.files[1]"), nil
	})
	if _, err := getSecret(ctx, ns, "bad"); !apierrors.IsNotFound(err) {
		t.Errorf("a Secret was written for invalid input (err %v)", err)
	}
	before := reconciles.patches.Load()
	time.Sleep(3 * time.Second)
	if n := reconciles.patches.Load() - before; n > 1 {
		t.Errorf("%d status patches in 3s after the terminal error: a retry loop (condition: %s)", n, msg)
	}
	c, _ := getConfig(ctx, ns, "bad")
	if c.Spec.JoinConfiguration.Discovery.BootstrapToken.Token != spec.JoinConfiguration.Discovery.BootstrapToken.Token {
		t.Errorf("spec token changed")
	}
}
