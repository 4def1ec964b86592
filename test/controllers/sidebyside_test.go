package controllers_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// observation is everything a user or another controller can see of one
// reconciled KubeadmConfig; the bootstrap token (random) is normalised.
type observation struct {
	SecretType      corev1.SecretType
	SecretLabels    map[string]string
	SecretOwner     string
	Value, Format   string
	DataSecretName  string
	Created         bool
	GenerationSeen  bool
	Conditions      []string
	V1Beta1         []string
	Spec            bootstrapv1.KubeadmConfigSpec
	TokenSet        bool
	InitLockPresent bool
}

func observe(ctx context.Context, ns, name string) (*observation, error) {
	c, err := getConfig(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	s, err := getSecret(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	token := c.Spec.JoinConfiguration.Discovery.BootstrapToken.Token
	spec := c.Spec.DeepCopy()
	if token != "" {
		spec.JoinConfiguration.Discovery.BootstrapToken.Token = "<token>"
	}
	o := &observation{
		SecretType: s.Type, SecretLabels: s.Labels,
		Value:          strings.ReplaceAll(string(s.Data["value"]), orNever(token), "<token>"),
		Format:         string(s.Data["format"]),
		DataSecretName: c.Status.DataSecretName,
		Created:        ptr.Deref(c.Status.Initialization.DataSecretCreated, false),
		GenerationSeen: c.Status.ObservedGeneration == c.Generation,
		Spec:           *spec,
		TokenSet:       token != "",
	}
	for _, r := range s.OwnerReferences {
		o.SecretOwner += r.Kind + "/" + r.Name + " controller=" + boolString(ptr.Deref(r.Controller, false)) + ";"
	}
	for _, cond := range c.Status.Conditions {
		o.Conditions = append(o.Conditions, cond.Type+"="+string(cond.Status)+"/"+cond.Reason)
	}
	if c.Status.Deprecated != nil && c.Status.Deprecated.V1Beta1 != nil {
		for _, cond := range c.Status.Deprecated.V1Beta1.Conditions {
			o.V1Beta1 = append(o.V1Beta1, string(cond.Type)+"="+string(cond.Status)+"/"+cond.Reason+"/"+string(cond.Severity))
		}
	}
	sort.Strings(o.Conditions)
	sort.Strings(o.V1Beta1)
	err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-lock"}, &corev1.ConfigMap{})
	o.InitLockPresent = err == nil
	return o, nil
}

func orNever(s string) string {
	if s == "" {
		return "\x00never\x00"
	}
	return s
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestSideBySide reconciles the same objects with CABPK's reconciler in one
// namespace and with nodeboot's in another, and compares everything
// observable: Secret data, type, labels and owner, status, conditions, the
// spec CABPK writes back, the init lock.
func TestSideBySide(t *testing.T) {
	type scenario struct {
		name        string
		initialized bool
		create      func(t *testing.T, ns string)
	}
	scenarios := []scenario{
		{"init", false, func(t *testing.T, ns string) {
			createMachine(t, ns, "cp-0", controlPlane, testSpec(controlPlane, false))
		}},
		{"join-control-plane", true, func(t *testing.T, ns string) {
			createMachine(t, ns, "cp-0", controlPlane, testSpec(controlPlane, true))
		}},
		{"join-worker", true, func(t *testing.T, ns string) {
			createMachine(t, ns, "cp-0", worker, testSpec(worker, true))
		}},
		{"machinepool", true, func(t *testing.T, ns string) {
			createMachinePool(t, ns, "cp-0", testSpec(worker, true))
		}},
	}
	namespaces := map[provider][]string{}
	for _, sc := range scenarios {
		for _, p := range []provider{oracle, nodeboot} {
			ns := newNamespace(t, string(p)+"-"+sc.name)
			namespaces[p] = append(namespaces[p], ns)
			createCluster(t, ns, clusterOptions{initialized: sc.initialized, certs: true, kubeconfig: true})
		}
	}
	startManager(t, managerOptions{provider: oracle, namespaces: namespaces[oracle]})
	startManager(t, managerOptions{provider: nodeboot, namespaces: namespaces[nodeboot]})
	for i, sc := range scenarios {
		sc.create(t, namespaces[oracle][i])
		sc.create(t, namespaces[nodeboot][i])
	}
	ctx := context.Background()
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var want, got *observation
			var diff string
			eventually(t, 90*time.Second, "identical observations", func() (bool, error) {
				var err error
				if want, err = observe(ctx, namespaces[oracle][i], "cp-0"); err != nil {
					return false, err
				}
				if got, err = observe(ctx, namespaces[nodeboot][i], "cp-0"); err != nil {
					return false, err
				}
				if !want.Created || !want.GenerationSeen || !got.Created || !got.GenerationSeen {
					return false, nil
				}
				diff = cmp.Diff(want, got)
				return diff == "", nil
			})
			if diff != "" {
				t.Fatalf("nodeboot differs from CABPK (-cabpk +nodeboot):\n%s", diff)
			}
			t.Logf("observed: %+v", got.Conditions)
			t.Logf("v1beta1: %+v lock=%v value=%d bytes", got.V1Beta1, got.InitLockPresent, len(got.Value))
			if sc.initialized && !got.TokenSet && sc.name != "init" {
				t.Errorf("expected a bootstrap token in the join spec")
			}
		})
	}
}
