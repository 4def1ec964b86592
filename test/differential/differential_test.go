// Package differential renders hundreds of generated KubeadmConfigs with
// nodeboot and with Cluster API v1.14.2's own kubeadm bootstrap reconciler (a
// test oracle, imported from the cluster-api module) and requires identical
// bytes. The vectors prove a few hand-picked cases; this proves the spread.
package differential

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/locking"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/reconcilers/kubeadmconfig"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/bootstrap"
	_ "github.com/nodeboot/nodeboot/cloudinit"
)

// Scenarios is how many KubeadmConfigs the test generates.
const Scenarios = 320

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

func TestCloudConfigMatchesCABPK(t *testing.T) {
	require.NoError(t, feature.Gates.(featuregate.MutableFeatureGate).Set("MachinePool=true"))
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	g := &gen{r: rand.New(rand.NewPCG(20261130, 1))}
	seen := map[role]int{}
	for i := 0; i < Scenarios; i++ {
		s := g.scenario(i)
		seen[s.role]++
		t.Run(s.name, func(t *testing.T) {
			objs := objects(t, s, certs)
			want, wantErr := cabpk(t, s, objs)
			got, gotErr := nodeboot(t, s, objs)
			if wantErr != nil || gotErr != nil {
				t.Fatalf("both must render: cabpk error %v, nodeboot error %v", wantErr, gotErr)
			}
			if !bytes.Equal(want, got) {
				require.Equal(t, string(want), string(got))
			}
		})
	}
	for r := roleInit; r <= roleMachinePool; r++ {
		require.GreaterOrEqual(t, seen[r], Scenarios/5, "too few %s scenarios", r)
	}
}

func objects(t *testing.T, s *scenario, certs secret.Certificates) []client.Object {
	t.Helper()
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Name}
	objs := []client.Object{s.cluster.DeepCopy(), s.config.DeepCopy()}
	if s.machine != nil {
		objs = append(objs, s.machine.DeepCopy())
	}
	if s.machinePool != nil {
		objs = append(objs, s.machinePool.DeepCopy())
	}
	for _, c := range certs {
		sec := c.AsSecret(key, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "none", UID: "1"})
		sec.OwnerReferences = nil
		objs = append(objs, sec)
	}
	if s.externalEtcd {
		for _, name := range []string{secret.Name(key.Name, secret.EtcdCA), secret.Name(key.Name, secret.APIServerEtcdClient)} {
			found := false
			for _, o := range objs {
				if o.GetName() == name {
					o.(*corev1.Secret).Data = externalCert(name)
					found = true
				}
			}
			if !found {
				objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: key.Namespace},
					Data: externalCert(name)})
			}
		}
	}
	for _, sec := range s.secrets {
		objs = append(objs, sec.DeepCopy())
	}
	if s.kcpVersion != "" {
		kcp := &unstructured.Unstructured{}
		kcp.SetAPIVersion("controlplane.cluster.x-k8s.io/v1beta2")
		kcp.SetKind("KubeadmControlPlane")
		kcp.SetNamespace(key.Namespace)
		kcp.SetName(s.cluster.Spec.ControlPlaneRef.Name)
		require.NoError(t, unstructured.SetNestedField(kcp.Object, s.kcpVersion, "spec", "version"))
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
			Name:   "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1beta2"}}}
		objs = append(objs, kcp, crd)
	}
	return objs
}

// cabpk runs Cluster API's own reconciler on the objects and returns the
// bootstrap Secret's value.
func cabpk(t *testing.T, s *scenario, objs []client.Object) ([]byte, error) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&bootstrapv1.KubeadmConfig{}, &clusterv1.Cluster{}).Build()
	r := &kubeadmconfig.Reconciler{
		Client: c, SecretCachingClient: c, APIReader: c,
		ClusterCache:    clustercache.NewFakeClusterCache(c, client.ObjectKeyFromObject(s.cluster)),
		KubeadmInitLock: locking.NewControlPlaneInitMutex(c),
		TokenTTL:        15 * time.Minute,
	}
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log.WithName("cabpk"))
	out := &corev1.Secret{}
	// The first pass only records the Paused condition and requeues.
	for pass := 0; ; pass++ {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s.config)}); err != nil {
			return nil, err
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(s.config), out)
		if err == nil {
			break
		}
		if pass == 2 {
			return nil, fmt.Errorf("no bootstrap secret after %d passes: %w", pass+1, err)
		}
	}
	require.Equal(t, "cloud-config", string(out.Data["format"]))
	return out.Data["value"], nil
}

func nodeboot(t *testing.T, s *scenario, objs []client.Object) ([]byte, error) {
	t.Helper()
	secrets := bootstrap.SecretMap{}
	for _, o := range objs {
		if sec, ok := o.(*corev1.Secret); ok {
			secrets[sec.Namespace+"/"+sec.Name] = sec.Data
		}
	}
	in := bootstrap.Input{Config: s.config, Cluster: s.cluster, Machine: s.machine, MachinePool: s.machinePool,
		Secrets: secrets, ControlPlaneVersion: s.kcpVersion}
	res, err := bootstrap.Build(context.Background(), in)
	if err != nil {
		return nil, err
	}
	out, err := res.Render()
	if err != nil {
		return nil, err
	}
	require.Equal(t, "cloud-config", out.Format)
	return out.Data, nil
}

// externalCert is what an operator stores for external etcd: the etcd CA has
// no key; the API server's client certificate has one.
func externalCert(name string) map[string][]byte {
	d := map[string][]byte{"tls.crt": []byte("external-crt-" + name + "\n")}
	if !bytes.Contains([]byte(name), []byte("-etcd")) || bytes.Contains([]byte(name), []byte("client")) {
		d["tls.key"] = []byte("external-key-" + name + "\n")
	}
	return d
}
