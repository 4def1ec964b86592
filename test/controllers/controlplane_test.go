package controllers_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// A control plane of another provider (Kamaji, k0smotron and others run
// CABPK workers): a kind the shipped role does not grant, here in an API
// group of its own.
const (
	standInGroup    = "controlplane.nodeboot.test"
	standInKind     = "StandInControlPlane"
	standInResource = "standincontrolplanes"
)

var (
	shippedOnce sync.Once
	shippedCfg  *rest.Config
	shippedErr  error
)

// shippedRoleConfig is the credentials of a user bound only to
// config/rbac/role.yaml as shipped, and the stand-in control-plane CRD,
// labelled for the current contract as a provider's CRD is.
func shippedRoleConfig(t testing.TB) *rest.Config {
	t.Helper()
	startEnv(t)
	shippedOnce.Do(func() {
		ctx := context.Background()
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: standInResource + "." + standInGroup, Labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1alpha1"}},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: standInGroup, Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: standInResource, Singular: strings.ToLower(standInKind), Kind: standInKind, ListKind: standInKind + "List"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			},
		}
		if shippedErr = k8s.Create(ctx, crd); shippedErr != nil {
			return
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if shippedErr = k8s.Get(ctx, client.ObjectKeyFromObject(crd), got); shippedErr != nil {
				return
			}
			established := false
			for _, c := range got.Status.Conditions {
				established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}
			if established {
				break
			}
			if time.Now().After(deadline) {
				shippedErr = context.DeadlineExceeded
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		role, err := testenv.ShippedRole("role.yaml")
		if err != nil {
			shippedErr = err
			return
		}
		role.Name = "nodeboot-shipped-manager-role"
		u, err := testenv.BindUser(ctx, env, cfg, k8s, role, "shipped-manager")
		if err != nil {
			shippedErr = err
			return
		}
		shippedCfg = u.Config()
		shippedCfg.QPS, shippedCfg.Burst = cfg.QPS, cfg.Burst
	})
	if shippedErr != nil {
		t.Fatalf("shipped role: %v", shippedErr)
	}
	return shippedCfg
}

// forbiddenReads counts the manager's requests on the stand-in resource
// that the API server refused.
type forbiddenReads struct{ n atomic.Int64 }

func (f *forbiddenReads) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusForbidden && strings.Contains(r.URL.Path, "/"+standInResource+"/") {
			f.n.Add(1)
		}
		return resp, err
	})
}

// TestControlPlaneOfAnotherProvider: a Cluster whose control plane is
// another provider's object, which the shipped role does not let the
// manager read. nodeboot gives a worker without file templates its data
// (the control plane is read only for {{ .controlPlane.version }}); a
// worker with a template gets DataSecretAvailable False naming the
// permission, and its data once the permission is granted. CABPK v1.14.2,
// under the same role, reads the control plane on every render and gives
// neither worker data.
func TestControlPlaneOfAnotherProvider(t *testing.T) {
	user := shippedRoleConfig(t)
	ctx := context.Background()
	got := map[provider]map[string]bool{}
	// CABPK first: the grant nodeboot gets later is then not in its way.
	for _, p := range []provider{oracle, nodeboot} {
		ns := newNamespace(t, "cp-"+string(p))
		var forbidden forbiddenReads
		startManager(t, managerOptions{provider: p, namespaces: []string{ns}, config: user, transport: forbidden.wrap})
		cluster := createCluster(t, ns, clusterOptions{initialized: true, certs: true, kubeconfig: true})
		cp := &unstructured.Unstructured{}
		cp.SetAPIVersion(standInGroup + "/v1alpha1")
		cp.SetKind(standInKind)
		cp.SetNamespace(ns)
		cp.SetName("cp")
		if err := unstructured.SetNestedField(cp.Object, "v1.33.4", "spec", "version"); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(ctx, cp); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(cluster.DeepCopy())
		cluster.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: standInGroup, Kind: standInKind, Name: "cp"}
		if err := k8s.Patch(ctx, cluster, patch); err != nil {
			t.Fatal(err)
		}
		createMachine(t, ns, "plain", worker, testSpec(worker, true))
		spec := testSpec(worker, true)
		spec.Files = append(spec.Files, bootstrapv1.File{Path: "/etc/control-plane-version", Permissions: "0644",
			Content: "control plane {{ .controlPlane.version }}\n", ContentFormat: bootstrapv1.FileContentFormatTemplate})
		createMachine(t, ns, "templated", worker, spec)

		got[p] = map[string]bool{}
		switch p {
		case nodeboot:
			eventually(t, 60*time.Second, "data for the worker without templates", func() (bool, error) {
				c, err := getConfig(ctx, ns, "plain")
				return err == nil && dataSecretCreated(c), err
			})
			var msg string
			eventually(t, 60*time.Second, "DataSecretAvailable False on the templated worker", func() (bool, error) {
				c, err := getConfig(ctx, ns, "templated")
				if err != nil {
					return false, err
				}
				cond := conditions.Get(c, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
				if cond == nil || cond.Status != metav1.ConditionFalse {
					return false, nil
				}
				msg = cond.Message
				return !dataSecretCreated(c), nil
			})
			for _, want := range []string{"spec.files[1]", "grant get on " + standInResource + " in API group " + standInGroup, standInKind + " " + ns + "/cp"} {
				if !strings.Contains(msg, want) {
					t.Errorf("condition %q does not say %q", msg, want)
				}
			}
			t.Logf("nodeboot, templated worker under the shipped role: %s", msg)
			if _, err := getSecret(ctx, ns, "templated"); !apierrors.IsNotFound(err) {
				t.Errorf("a data Secret for the templated worker: %v", err)
			}
			// Granting the permission is all it takes (a touch of the config
			// skips the error backoff).
			grantStandIn(t)
			t.Cleanup(func() { revokeStandIn(t) })
			touch(t, ns, "templated")
			eventually(t, 60*time.Second, "data for the templated worker once get is granted", func() (bool, error) {
				c, err := getConfig(ctx, ns, "templated")
				return err == nil && dataSecretCreated(c), err
			})
			s, err := getSecret(ctx, ns, "templated")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(s.Data["value"]), "control plane v1.33.4") {
				t.Errorf("the template did not get the control plane's version:\n%s", s.Data["value"])
			}
		case oracle:
			// CABPK's reads of the control plane are refused on every
			// reconcile; give it several before looking.
			eventually(t, 60*time.Second, "CABPK's refused reads of the control plane", func() (bool, error) {
				return forbidden.n.Load() >= 4, nil
			})
		}
		for _, name := range []string{"plain", "templated"} {
			c, err := getConfig(ctx, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			got[p][name] = dataSecretCreated(c)
		}
	}
	t.Logf("data created under the shipped role: nodeboot %v, CABPK %v", got[nodeboot], got[oracle])
	if !got[nodeboot]["plain"] || !got[nodeboot]["templated"] {
		t.Errorf("nodeboot: %v, want data for both workers", got[nodeboot])
	}
	if got[oracle]["plain"] || got[oracle]["templated"] {
		t.Errorf("CABPK v1.14.2 made data it cannot (it reads the control plane on every render): %v; the README's row on other control planes is out of date", got[oracle])
	}
}

const standInGrant = "nodeboot-test-standin-reader"

func grantStandIn(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: standInGrant},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{standInGroup}, Resources: []string{standInResource}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: standInGrant},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: standInGrant},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "shipped-manager"}}}
	for _, o := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

func revokeStandIn(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: standInGrant}}, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: standInGrant}}} {
		if err := k8s.Delete(ctx, o); err != nil {
			t.Error(err)
		}
	}
}

// touch annotates a config, which queues it at once whatever its backoff.
func touch(t testing.TB, ns, name string) {
	t.Helper()
	ctx := context.Background()
	c, err := getConfig(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(c.DeepCopy())
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["nodeboot.test/touched"] = time.Now().Format(time.RFC3339Nano)
	if err := k8s.Patch(ctx, c, patch); err != nil {
		t.Fatal(err)
	}
}
