package bootstrapdata

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// TestRebuildReporter: data written with a bootstrap reporter is rebuilt
// with the Rebuilder's Reporter, which goes first as in the manager; without
// one it is an error, not a skip, since such data would go unproven. A
// same-named Secret that is not the config's does not count.
func TestRebuildReporter(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	config := func(name string) *bootstrapv1.KubeadmConfig {
		return &bootstrapv1.KubeadmConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Status:     bootstrapv1.KubeadmConfigStatus{DataSecretName: name},
		}
	}
	own, foreign := config("own"), config("foreign")
	own.UID, foreign.UID = "uid-own", "uid-foreign"
	credential := func(c *bootstrapv1.KubeadmConfig, uid string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: c.Name + nodebootv1.BootstrapReportSecretSuffix,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: c.Name, UID: types.UID("uid-" + uid), Controller: ptr.To(true)}}},
			Type: nodebootv1.BootstrapReportSecretType,
		}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(own, foreign, credential(own, "own"), credential(foreign, "someone-else")).Build()
	b := &Rebuilder{Reader: c}
	if _, err := b.Rebuild(context.Background(), own, RebuildOptions{}); !errors.Is(err, ErrReporter) || errors.Is(err, ErrSkipped) {
		t.Errorf("own reporter credential, no Reporter: %v, want ErrReporter and no skip", err)
	}
	if _, err := b.Rebuild(context.Background(), foreign, RebuildOptions{}); errors.Is(err, ErrReporter) || !errors.Is(err, ErrNoOwner) {
		t.Errorf("a Secret controlled by another object: %v, want the usual rebuild (here: no owner)", err)
	}
	b.Reporter = &stubExtension{}
	if _, err := b.Rebuild(context.Background(), own, RebuildOptions{}); errors.Is(err, ErrReporter) || !errors.Is(err, ErrNoOwner) {
		t.Errorf("own reporter credential with a Reporter: %v, want the usual rebuild (here: no owner)", err)
	}
}

type stubExtension struct{ Extension }
