package controllers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
)

// hazardousSpecs are worker specs CABPK's webhook accepts and its reconciler
// renders, though the output breaks or changes the node: a Windows template
// (cloudbase-init paths), YAML-breaking and injecting values, and legacy
// Ignition fields CABPK drops or inverts.
func hazardousSpecs() map[string]bootstrapv1.KubeadmConfigSpec {
	windows := testSpec(worker, true)
	windows.Files = []bootstrapv1.File{
		{Path: "c:/k/azure.json", Content: "{}\n", Permissions: "0644"},
		{Path: `C:\k\node.json`, Content: "{\"a\": 1}\n"},
		{Path: "etc/relative", Content: "x"},
	}
	windows.PreKubeadmCommands = []string{`powershell C:/k/kubeadm-bootstrap.ps1`}
	yamlBreaking := testSpec(worker, true)
	yamlBreaking.Users = []bootstrapv1.User{{Name: "ops", Gecos: "Ops: on-call #2", Sudo: "ALL=(ALL) NOPASSWD: ALL"}}
	yamlBreaking.NTP = bootstrapv1.NTP{Servers: []string{"pool.ntp.org\nruncmd: [reboot]"}}
	yamlBreaking.DiskSetup = bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{{Device: "/dev/sdb", Layout: ptr.To(true)}}}
	legacy := testSpec(worker, true)
	legacy.Format = bootstrapv1.Ignition
	legacy.Users[0].LockPassword = ptr.To(false)
	legacy.NTP = bootstrapv1.NTP{Enabled: ptr.To(false), Servers: []string{"time.example.com"}}
	legacy.DiskSetup = bootstrapv1.DiskSetup{
		Partitions:  []bootstrapv1.Partition{{Device: "/dev/sdb", DiskLayout: []bootstrapv1.PartitionSpec{{Percentage: 100}}}},
		Filesystems: []bootstrapv1.Filesystem{{Device: "/dev/sdb1", Filesystem: "ext4", Label: "data", Overwrite: ptr.To(false)}},
	}
	legacy.Mounts = []bootstrapv1.MountPoints{{"/dev/sdc1", "/var/lib/x"}}
	return map[string]bootstrapv1.KubeadmConfigSpec{"windows": windows, "yaml-breaking": yamlBreaking, "legacy-ignition": legacy}
}

// TestHazardsRenderAsCABPK: for each hazardous spec the manager on envtest
// writes the Secret CABPK's reconciler writes for the same objects (and the
// same status), and adds only a RenderWarnings condition and a Warning
// Event that name the fields, never the values.
func TestHazardsRenderAsCABPK(t *testing.T) {
	specs := hazardousSpecs()
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	namespaces := map[provider][]string{}
	for _, n := range names {
		for _, p := range []provider{oracle, nodeboot} {
			ns := newNamespace(t, string(p)+"-hz-"+n)
			namespaces[p] = append(namespaces[p], ns)
			createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
		}
	}
	startManager(t, managerOptions{provider: oracle, namespaces: namespaces[oracle]})
	startManager(t, managerOptions{provider: nodeboot, namespaces: namespaces[nodeboot]})
	for i, n := range names {
		for _, p := range []provider{oracle, nodeboot} {
			createMachine(t, namespaces[p][i], "w-0", worker, specs[n])
		}
	}
	ctx := context.Background()
	for i, n := range names {
		t.Run(n, func(t *testing.T) {
			var want, got *observation
			var diff string
			defer func() {
				if t.Failed() {
					for _, p := range []provider{oracle, nodeboot} {
						if c, err := getConfig(ctx, namespaces[p][i], "w-0"); err == nil {
							t.Logf("%s: conditions %+v", p, c.Status.Conditions)
						}
					}
				}
			}()
			eventually(t, 90*time.Second, "CABPK's observations", func() (bool, error) {
				var err error
				if want, err = observe(ctx, namespaces[oracle][i], "w-0"); err != nil {
					return false, client.IgnoreNotFound(err)
				}
				if got, err = observe(ctx, namespaces[nodeboot][i], "w-0"); err != nil {
					return false, client.IgnoreNotFound(err)
				}
				if !want.Created || !want.GenerationSeen || !got.Created || !got.GenerationSeen {
					return false, nil
				}
				got.Conditions = slices.DeleteFunc(got.Conditions, func(c string) bool {
					return c == nodebootv1.RenderWarningsCondition+"=True/"+nodebootv1.CABPKHazardsReason
				})
				diff = cmp.Diff(want, got)
				return diff == "", nil
			})
			if diff != "" {
				t.Fatalf("nodeboot differs from CABPK (-cabpk +nodeboot):\n%s", diff)
			}
			c, err := getConfig(ctx, namespaces[nodeboot][i], "w-0")
			if err != nil {
				t.Fatal(err)
			}
			cond := conditions.Get(c, nodebootv1.RenderWarningsCondition)
			if cond == nil || cond.Status != "True" || !strings.Contains(cond.Message, "spec.") {
				t.Fatalf("RenderWarnings condition = %+v", cond)
			}
			for _, secret := range []string{"NOPASSWD", "on-call", "runcmd: [reboot]", "time.example.com", "s3cr3t"} {
				if strings.Contains(cond.Message, secret) {
					t.Errorf("the condition quotes a value (%q): %s", secret, cond.Message)
				}
			}
			t.Logf("RenderWarnings: %s", cond.Message)
			eventually(t, 30*time.Second, "a Warning Event naming the fields", func() (bool, error) {
				var evs corev1.EventList
				if err := k8s.List(ctx, &evs, client.InNamespace(namespaces[nodeboot][i])); err != nil {
					return false, err
				}
				for _, e := range evs.Items {
					if e.Type == corev1.EventTypeWarning && e.Reason == nodebootv1.CABPKHazardsReason && e.InvolvedObject.Name == "w-0" {
						return strings.Contains(e.Message, "spec."), nil
					}
				}
				return false, nil
			})
		})
	}
}

// TestStrictRefusesHazards: with the manager's --strict, the same specs get
// no Secret and a terminal DataSecretAvailable condition naming the field;
// nodeboot.dev/strict: "false" on one config opts it out again.
func TestStrictRefusesHazards(t *testing.T) {
	ns := newNamespace(t, "strict")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	var reconciles countingReconciles
	startManager(t, managerOptions{provider: nodeboot, namespaces: []string{ns}, wrap: reconciles.wrap, strict: true})
	specs := hazardousSpecs()
	createMachine(t, ns, "refused", worker, specs["yaml-breaking"])
	_, optOut := createMachine(t, ns, "opted-out", worker, specs["windows"])
	ctx := context.Background()
	update(t, optOut, func() { optOut.Annotations = map[string]string{bootstrap.AnnotationStrict: "false"} })
	var msg string
	eventually(t, 30*time.Second, "a DataSecretAvailable condition naming the field", func() (bool, error) {
		c, err := getConfig(ctx, ns, "refused")
		if err != nil {
			return false, err
		}
		cond := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
		if cond == nil || cond.Status != "False" {
			return false, nil
		}
		msg = cond.Message
		return strings.Contains(msg, "spec.users[0].sudo") && strings.Contains(msg, bootstrap.AnnotationStrict), nil
	})
	if strings.Contains(msg, "NOPASSWD") {
		t.Errorf("the condition quotes a value: %s", msg)
	}
	if _, err := getSecret(ctx, ns, "refused"); !apierrors.IsNotFound(err) {
		t.Errorf("a Secret was written for refused input (err %v)", err)
	}
	before := reconciles.patches.Load()
	time.Sleep(3 * time.Second)
	if n := reconciles.patches.Load() - before; n > 1 {
		t.Errorf("%d status patches in 3s after the terminal error: a retry loop (condition: %s)", n, msg)
	}
	eventually(t, 30*time.Second, "the opted-out config's data", func() (bool, error) {
		c, err := getConfig(ctx, ns, "opted-out")
		if err != nil {
			return false, err
		}
		return dataSecretCreated(c), nil
	})
}
