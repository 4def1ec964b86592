package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// TestCredentialsInErrors drives error paths whose cause is a credential
// and checks that the credential reaches no condition and no log line (the
// final scan of TestMain looks for it again after every test):
//   - an Ignition (legacy dialect) worker join whose users take their
//     password hashes from a Secret, one the layout cannot carry at all
//     (an error) and one it reads differently (a warning);
//   - a FirstBootAddon whose manifests come from a Secret holding invalid
//     YAML with a credential in it.
func TestCredentialsInErrors(t *testing.T) {
	const (
		// Not a plain YAML scalar: the legacy layout cannot carry it.
		badHash = "{leak-me-hash-4f1c"
		// Read as "x" by the legacy layout (the rest is a comment).
		changedHash = "x #leak-me-hash-9b2e"
		// A complex YAML key: a parse error may quote it.
		manifestSecret = "hunter2hunter2"
	)
	for _, v := range []string{badHash, changedHash, manifestSecret} {
		registerCredential(v)
	}
	ctx := context.Background()

	ignNS := newNamespace(t, "leak-ignition")
	createCluster(t, ignNS, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ignNS, Name: "ops-passwd"},
		Data:       map[string][]byte{"bad": []byte(badHash), "changed": []byte(changedHash)},
	})

	addonNS := newNamespace(t, "leak-addon")
	createCluster(t, addonNS, clusterOptions{certs: true, network: addonNetwork, labels: map[string]string{addonLabel: "leak"}})
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: addonNS, Name: "manifests"},
		Data:       map[string][]byte{"cni.yaml": []byte("? [" + manifestSecret + "]\n")},
	})
	create(t, &addonsv1.FirstBootAddon{
		ObjectMeta: metav1.ObjectMeta{Namespace: addonNS, Name: "leaky"},
		Spec: addonsv1.FirstBootAddonSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{addonLabel: "leak"}},
			Manifests:       &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsSecret, Name: "manifests"},
		},
	})

	startManager(t, managerOptions{provider: nodeboot, addons: &managerAddonOptions, namespaces: []string{ignNS, addonNS}})

	spec := testSpec(worker, true)
	spec.Format = bootstrapv1.Ignition
	spec.Users = []bootstrapv1.User{
		{Name: "ops", LockPassword: ptr.To(false), PasswdFrom: bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: "ops-passwd", Key: "bad"}}},
		{Name: "dev", LockPassword: ptr.To(false), PasswdFrom: bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: "ops-passwd", Key: "changed"}}},
	}
	createMachine(t, ignNS, "w-0", worker, spec)
	createMachine(t, addonNS, "cp-0", controlPlane, testSpec(controlPlane, false))

	t.Run("ignition passwdFrom", func(t *testing.T) {
		c := waitForDataFailure(t, ignNS, "w-0")
		msg := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition).Message
		if !hasProblem(msg, "spec.users[0].passwd") {
			t.Errorf("DataSecretAvailable %q names no problem of spec.users[0].passwd", msg)
		}
		waitForReconcileErrorLog(t, ignNS)
		for _, v := range []string{badHash, changedHash, "leak-me-hash"} {
			checkNotLeaked(t, v, ignNS, c)
		}
	})

	t.Run("add-on manifests Secret", func(t *testing.T) {
		c := waitForDataFailure(t, addonNS, "cp-0")
		msg := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition).Message
		if !hasProblem(msg, "FirstBootAddon "+addonNS+"/leaky: spec.manifests") {
			t.Errorf("DataSecretAvailable %q names no problem of the add-on's spec.manifests", msg)
		}
		a := &addonsv1.FirstBootAddon{}
		eventually(t, 30*time.Second, "SourceValid=False/MalformedManifest on the add-on", func() (bool, error) {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: addonNS, Name: "leaky"}, a); err != nil {
				return false, err
			}
			cond := meta.FindStatusCondition(a.Status.Conditions, addonsv1.SourceValidCondition)
			return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == addonsv1.MalformedManifestReason, nil
		})
		waitForReconcileErrorLog(t, addonNS)
		checkNotLeaked(t, manifestSecret, addonNS, c, a)
	})
}

// waitForDataFailure waits for a DataSecretAvailable=False condition that is
// not the wait for the control plane, and returns the KubeadmConfig.
func waitForDataFailure(t *testing.T, ns, name string) *bootstrapv1.KubeadmConfig {
	t.Helper()
	var c *bootstrapv1.KubeadmConfig
	eventually(t, 30*time.Second, "a DataSecretAvailable=False condition on "+ns+"/"+name, func() (bool, error) {
		var err error
		if c, err = getConfig(context.Background(), ns, name); err != nil {
			return false, err
		}
		cond := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == bootstrapv1.KubeadmConfigDataSecretNotAvailableReason &&
			cond.Message != "Waiting for Cluster control plane to be initialized", nil
	})
	return c
}

// hasProblem tells whether a condition message (problems joined by "; ")
// has one about path.
func hasProblem(msg, path string) bool {
	for _, p := range strings.Split(msg, "; ") {
		if strings.HasPrefix(p, path+": ") {
			return true
		}
	}
	return false
}

// waitForReconcileErrorLog waits for controller-runtime's log line of the
// failed reconcile in ns, so the log check below sees the error's text.
func waitForReconcileErrorLog(t *testing.T, ns string) {
	t.Helper()
	eventually(t, 30*time.Second, "the reconcile error logged for "+ns, func() (bool, error) {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"msg"="Reconciler error"`) && strings.Contains(l, `"namespace"="`+ns+`"`) {
				return true, nil
			}
		}
		return false, nil
	})
}

// checkNotLeaked fails when secret appears in the status (conditions
// included) of any of objs or in a log line about ns.
func checkNotLeaked(t *testing.T, secret, ns string, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var status struct {
			Status json.RawMessage `json:"status"`
		}
		if err := json.Unmarshal(raw, &status); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(status.Status), secret) {
			t.Errorf("%T %s/%s: the status quotes the credential %q: %s", o, o.GetNamespace(), o.GetName(), secret, status.Status)
		}
	}
	n := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, ns) {
			n++
		}
		if strings.Contains(l, secret) {
			t.Errorf("a log line quotes the credential %q: %s", secret, l)
		}
	}
	if n == 0 {
		t.Errorf("no log line mentions %s; the log check would prove nothing", ns)
	}
}

// stuckRunnable ignores its context: the kind of goroutine in nodeboot's
// code a manager's shutdown must not excuse.
type stuckRunnable struct{ release chan struct{} }

func (r *stuckRunnable) Start(context.Context) error {
	<-r.release
	return nil
}

// TestShutdownCatchesStuckGoroutine: a goroutine of ours that outlives its
// manager fails the shutdown check, even though the manager's ClusterCache
// (the one stall the check excuses) runs beside it.
func TestShutdownCatchesStuckGoroutine(t *testing.T) {
	stuck := &stuckRunnable{release: make(chan struct{})}
	defer close(stuck.release)
	var verdict error
	judged := false
	stop := startManager(t, managerOptions{
		provider: nodeboot, namespaces: []string{newNamespace(t, "stuck")}, grace: time.Second,
		runnables: []manager.Runnable{stuck},
		shutdown:  func(err error) { verdict, judged = err, true },
	})
	time.Sleep(500 * time.Millisecond)
	stop()
	if !judged {
		t.Fatal("the shutdown was not judged")
	}
	if verdict == nil || !strings.Contains(verdict.Error(), "controllers_test.(*stuckRunnable).Start") {
		t.Fatalf("verdict %v; want the stuck goroutine named", verdict)
	}
}

// TestHostileTemplateIsTerminal: a contentFormat: Template file whose loops
// never end, and one whose text (from a Secret) does not parse, end in a
// terminal DataSecretAvailable condition naming the field and quoting
// nothing of the Secret, without a retry loop, and do not hold the only
// worker: a valid config created after them still gets its data.
func TestHostileTemplateIsTerminal(t *testing.T) {
	const marker = "tmpl-leak-7d2a"
	registerCredential(marker)
	ns := newNamespace(t, "hostile-template")
	createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tmpl"},
		Data:       map[string][]byte{"bad": []byte("ok\n{{ " + marker + " }}\n")},
	})
	var reconciles countingReconciles
	startManager(t, managerOptions{provider: nodeboot, namespaces: []string{ns}, wrap: reconciles.wrap, concurrency: 1, grace: 5 * time.Second})

	loop := testSpec(worker, true)
	loop.Files = append(loop.Files, bootstrapv1.File{Path: "/etc/loop", ContentFormat: bootstrapv1.FileContentFormatTemplate,
		Content: "{{ range 1000000000 }}{{ range 1000000000 }}{{ end }}{{ end }}"})
	leak := testSpec(worker, true)
	leak.Files = append(leak.Files, bootstrapv1.File{Path: "/etc/leak", ContentFormat: bootstrapv1.FileContentFormatTemplate,
		ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "tmpl", Key: "bad"}}})
	createMachine(t, ns, "loop", worker, loop)
	createMachine(t, ns, "leak", worker, leak)
	createMachine(t, ns, "fine", worker, testSpec(worker, true))

	ctx := context.Background()
	field := func(c *bootstrapv1.KubeadmConfig, f string) string {
		return fmt.Sprintf("spec.files[%d].%s", len(c.Spec.Files)-1, f)
	}
	for name, want := range map[string]struct{ field, msg string }{
		"loop": {"content", " runs "}, // more than N steps, or longer than 2s: whichever comes first
		"leak": {"contentFrom.secret", "template line 2: cannot be parsed"},
	} {
		c := waitForDataFailure(t, ns, name)
		msg := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition).Message
		if !hasProblem(msg, field(c, want.field)) || !strings.Contains(msg, want.msg) {
			t.Errorf("%s: DataSecretAvailable %q; want %s: ...%s", name, msg, field(c, want.field), want.msg)
		}
		if _, err := getSecret(ctx, ns, name); !apierrors.IsNotFound(err) {
			t.Errorf("%s: a data Secret was written (err %v)", name, err)
		}
		checkNotLeaked(t, marker, ns, c)
	}
	eventually(t, 30*time.Second, "the data Secret of the valid config", func() (bool, error) {
		_, err := getSecret(ctx, ns, "fine")
		return err == nil, client.IgnoreNotFound(err)
	})
	before := reconciles.patches.Load()
	time.Sleep(3 * time.Second)
	if n := reconciles.patches.Load() - before; n > 2 {
		t.Errorf("%d status patches in 3s after the terminal errors: a retry loop", n)
	}
}
