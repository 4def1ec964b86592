package nodereport

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

func fileAt(p *provisioning.Plan, path string) *provisioning.File {
	for i := range p.Files {
		if p.Files[i].Path == path {
			return &p.Files[i]
		}
	}
	return nil
}

// TestExtension: the reporter goes into the data with a fresh credential
// Secret of the config, the per-config URL and the target the format asks
// for; the fail-fast annotation is read strictly.
func TestExtension(t *testing.T) {
	ca := testenv.TestCABundle(t)
	ext := &Extension{URL: "https://mgmt.example:9445/", CABundle: ca}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}}
	config := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Name: "w-0", Namespace: "ns", UID: "u-1"}}
	build := func(vector string) *bootstrap.Result {
		return testenv.BuildVector(t, filepath.Join(testenv.VectorsDir(t), vector))
	}

	res := build("cc-join-worker-minimal-v1.33")
	if err := ext.MutatePlan(context.Background(), cluster, config, res); err != nil {
		t.Fatal(err)
	}
	if len(res.Secrets) != 1 {
		t.Fatalf("%d Secrets, want the credential", len(res.Secrets))
	}
	if len(res.Conditions) != 1 || res.Conditions[0].Type != NodeBootstrappedCondition || res.Conditions[0].Reason != PendingReason ||
		res.Conditions[0].Status != metav1.ConditionUnknown {
		t.Fatalf("conditions %+v, want NodeBootstrapped Unknown/Pending until the node reports", res.Conditions)
	}
	sec := res.Secrets[0]
	token := string(sec.Data[CredentialKey])
	if sec.Name != CredentialSecretName("w-0") || sec.Type != CredentialSecretType || len(token) < 40 || metav1.GetControllerOf(sec).UID != "u-1" {
		t.Fatalf("credential Secret %s type %s controller %v", sec.Name, sec.Type, metav1.GetControllerOf(sec))
	}
	if f := fileAt(res.Plan, nodereport.ConfigDir+"/token"); f == nil || f.Content != token || f.Permissions != "0600" {
		t.Fatal("the data does not carry the Secret's credential in a 0600 file")
	}
	if f := fileAt(res.Plan, nodereport.ConfigDir+"/url"); f == nil || f.Content != "https://mgmt.example:9445"+Path+"ns/w-0\n" {
		t.Fatalf("url file %v", f)
	}
	if f := fileAt(res.Plan, nodereport.ConfigDir+"/settings"); f == nil || !strings.Contains(f.Content, "target=cloud-init\n") || !strings.Contains(f.Content, "failfast=false\n") {
		t.Fatalf("settings %v", f)
	}
	if out, err := res.Render(); err != nil || !strings.Contains(string(out.Data), nodereport.ScriptPath) {
		t.Fatalf("render: %v", err)
	}
	again := build("cc-join-worker-minimal-v1.33")
	if err := ext.MutatePlan(context.Background(), cluster, config, again); err != nil {
		t.Fatal(err)
	}
	if string(again.Secrets[0].Data[CredentialKey]) == token {
		t.Fatal("new data got the old credential")
	}

	failFast := config.DeepCopy()
	failFast.Annotations = map[string]string{AnnotationFailFast: "true"}
	res = build("cc-join-worker-minimal-v1.33")
	if err := ext.MutatePlan(context.Background(), cluster, failFast, res); err != nil {
		t.Fatal(err)
	}
	if f := fileAt(res.Plan, nodereport.ConfigDir+"/settings"); !strings.Contains(f.Content, "failfast=true\n") {
		t.Fatal("fail-fast annotation not applied")
	}
	failFast.Annotations[AnnotationFailFast] = "yes-secret"
	res = build("cc-join-worker-minimal-v1.33")
	err := ext.MutatePlan(context.Background(), cluster, failFast, res)
	if err == nil || !strings.Contains(err.Error(), AnnotationFailFast) || strings.Contains(err.Error(), "yes-secret") || len(res.Secrets) != 0 {
		t.Fatalf("invalid fail-fast annotation: %v", err)
	}

	for version, unit := range map[string]string{provisioning.VersionCABPK: "kubeadm.service", "3.4.0": "nodeboot-bootstrap.service"} {
		res = build("ign-join-worker-minimal-v1.33")
		res.Options.Version = version
		if err := ext.MutatePlan(context.Background(), cluster, config, res); err != nil {
			t.Fatal(err)
		}
		if fileAt(res.Plan, "/etc/systemd/system/"+unit+".d/10-nodeboot-report.conf") == nil {
			t.Errorf("ignition %q: no OnFailure drop-in for %s", version, unit)
		}
		if _, err := res.Render(); err != nil {
			t.Errorf("ignition %q: %v", version, err)
		}
	}

	for _, bad := range []string{"http://mgmt.example", "https://", "https://u:p@mgmt.example", "https://mgmt.example/?q"} {
		res = build("cc-join-worker-minimal-v1.33")
		if err := (&Extension{URL: bad}).MutatePlan(context.Background(), cluster, config, res); err == nil {
			t.Errorf("base URL %q accepted", bad)
		}
	}
	res = build("cc-join-worker-minimal-v1.33")
	res.Format = "other"
	if err := ext.MutatePlan(context.Background(), cluster, config, res); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("unknown format: %v", err)
	}
}
