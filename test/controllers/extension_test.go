package controllers_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// addonExtension adds a manifest file and an apply command on init nodes
// and a kubelet argument on every node.
type addonExtension struct{}

func (addonExtension) MutateConfig(_ context.Context, _ *clusterv1.Cluster, c *bootstrapv1.KubeadmConfig) error {
	c.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs = append(c.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs,
		bootstrapv1.Arg{Name: "cluster-dns", Value: ptrTo(nodeLocalDNSIP)})
	return nil
}

func (addonExtension) MutatePlan(_ context.Context, _ *clusterv1.Cluster, _ *bootstrapv1.KubeadmConfig, r *bootstrap.Result) error {
	if r.Plan.Role != provisioning.RoleInit {
		return nil
	}
	r.Plan.Files = append(r.Plan.Files, provisioning.File{Path: "/etc/nodeboot/addons/cni.yaml", Permissions: "0600", Content: "kind: List\n"})
	r.Plan.Commands = append(r.Plan.Commands, provisioning.Command{Phase: provisioning.PhasePost, Script: "kubectl apply -f /etc/nodeboot/addons/cni.yaml"})
	return nil
}

func ptrTo(s string) *string { return &s }

// TestExtensions: configured extensions change the data (init gets the
// add-on, joins the kubelet setting) but never the stored spec.
func TestExtensions(t *testing.T) {
	initNS := newNamespace(t, "ext-init")
	joinNS := newNamespace(t, "ext-join")
	createCluster(t, initNS, clusterOptions{certs: true})
	createCluster(t, joinNS, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	startManager(t, managerOptions{provider: nodeboot, namespaces: []string{initNS, joinNS}, extensions: []controllersExtension{addonExtension{}}})
	createMachine(t, initNS, "cp-0", controlPlane, testSpec(controlPlane, false))
	createMachine(t, joinNS, "w-0", worker, testSpec(worker, true))
	ctx := context.Background()

	init := nodeData(t, waitForData(t, initNS, "cp-0"))
	wantInit := []string{"echo pre", vectorRunCmd(t, "cc-init-minimal-v1.33")[0], "kubectl apply -f /etc/nodeboot/addons/cni.yaml"}
	if d := cmp.Diff(wantInit, init.RunCmd); d != "" {
		t.Errorf("cp-0: runcmd, the extension's command after kubeadm init (-want +got):\n%s", d)
	}
	wantFile := []cloudFile{{Path: "/etc/nodeboot/addons/cni.yaml", Permissions: "0600", Content: "kind: List\n"}}
	var gotFile []cloudFile
	for _, f := range init.WriteFiles {
		if f.Path == wantFile[0].Path {
			gotFile = append(gotFile, f)
		}
	}
	if d := cmp.Diff(wantFile, gotFile); d != "" {
		t.Errorf("cp-0: the extension's file (-want +got):\n%s", d)
	}

	join := nodeData(t, waitForData(t, joinNS, "w-0"))
	if d := cmp.Diff(append([]string{"echo pre"}, vectorRunCmd(t, "cc-join-worker-minimal-v1.33")...), join.RunCmd); d != "" {
		t.Errorf("w-0: runcmd of a join, unchanged by the extension (-want +got):\n%s", d)
	}
	checkClusterDNS(t, "w-0", join.kubeadmConfig(t, "/run/kubeadm/kubeadm-join-config.yaml", "JoinConfiguration"))

	for _, c := range []struct{ ns, name string }{{initNS, "cp-0"}, {joinNS, "w-0"}} {
		cfg, err := getConfig(ctx, c.ns, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(cfg.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs); n != 0 {
			t.Errorf("%s: the extension's kubelet argument was persisted into the spec", c.name)
		}
	}
}
