package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestTooLargeSettles: data over its Cluster's budget gets a terminal
// condition once, and the config then stays put. With reports on, each
// render carries a fresh random credential and so differs by a few bytes;
// the e2e test caught the manager re-rendering such a config and
// rewriting its condition once a second for ever, each write requeueing it.
func TestTooLargeSettles(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "too-large")
	c := createCluster(t, ns, clusterOptions{network: addonNetwork, labels: map[string]string{addonLabel: "standard"}})
	c.Annotations = map[string]string{addonsctrl.AnnotationMaxBytes: "4096"}
	if err := k8s.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, a := range standardAddons(ns) {
		create(t, a)
	}
	opts := managerAddonOptions
	rep := &nodereportctrl.Extension{URL: "https://127.0.0.1:1", CABundle: testenv.TestCABundle(t)}
	startManager(t, managerOptions{provider: nodeboot, addons: &opts, namespaces: []string{ns}, extensions: []controllersExtension{rep}})
	createIgnitionInit(t, ns)

	var cond *metav1.Condition
	var config *bootstrapv1.KubeadmConfig
	eventually(t, 60*time.Second, "DataSecretAvailable "+nodebootv1.BootstrapDataTooLargeReason, func() (bool, error) {
		var err error
		if config, err = getConfig(ctx, ns, "cp-0"); err != nil {
			return false, err
		}
		cond = conditions.Get(config, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
		return cond != nil && cond.Reason == nodebootv1.BootstrapDataTooLargeReason, nil
	})
	if cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "budget 4096") {
		t.Fatalf("DataSecretAvailable: %s %s %q", cond.Status, cond.Reason, cond.Message)
	}
	if config.Status.DataSecretName != "" {
		t.Fatalf("data Secret %s written for data over its budget", config.Status.DataSecretName)
	}
	before := config.ResourceVersion
	time.Sleep(8 * time.Second)
	after, err := getConfig(ctx, ns, "cp-0")
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before {
		t.Errorf("the config was rewritten after its terminal condition (resourceVersion %s, then %s): %q",
			before, after.ResourceVersion, conditions.Get(after, bootstrapv1.KubeadmConfigDataSecretAvailableCondition).Message)
	}
}
