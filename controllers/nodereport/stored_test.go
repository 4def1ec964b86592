package nodereport

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestExtensionRebuildsWithStoredCredential: with Stored set, the extension
// embeds the config's saved credential instead of minting one, so two
// rebuilds give the same bytes, the bytes of data built with that
// credential; a Secret of an earlier config of the same name (another
// UID), of another kind of owner or of another type is not the config's.
func TestExtensionRebuildsWithStoredCredential(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	ca := testenv.TestCABundle(t)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}}
	config := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Name: "w-0", Namespace: "ns", UID: "u-1"}}
	minted, err := NewCredentialSecret(config, cluster.Name)
	if err != nil {
		t.Fatal(err)
	}
	render := func(ext *Extension) ([]byte, error) {
		res := testenv.BuildVector(t, filepath.Join(testenv.VectorsDir(t), "cc-join-worker-minimal-v1.33"))
		if err := ext.MutatePlan(context.Background(), cluster, config, res); err != nil {
			return nil, err
		}
		out, err := res.Render()
		if err != nil {
			t.Fatal(err)
		}
		return out.Data, nil
	}
	// The data the manager wrote: the extension with the minted credential.
	written, err := render(&Extension{URL: "https://mgmt.example:9445", CABundle: ca, Stored: fake.NewClientBuilder().WithScheme(s).WithObjects(minted.DeepCopy()).Build()})
	if err != nil {
		t.Fatal(err)
	}
	again, err := render(&Extension{URL: "https://mgmt.example:9445", CABundle: ca, Stored: fake.NewClientBuilder().WithScheme(s).WithObjects(minted.DeepCopy()).Build()})
	if err != nil || !bytes.Equal(again, written) {
		t.Fatalf("a second rebuild with the stored credential differs (%v)", err)
	}
	fresh, err := render(&Extension{URL: "https://mgmt.example:9445", CABundle: ca})
	if err != nil || bytes.Equal(fresh, written) {
		t.Fatalf("without Stored the extension must mint a new credential (%v)", err)
	}

	for name, mutate := range map[string]func(*corev1.Secret){
		"earlier config of the same name": func(s *corev1.Secret) { s.OwnerReferences[0].UID = "u-0" },
		"another kind of controller":      func(s *corev1.Secret) { s.OwnerReferences[0].Kind = "Machine" },
		"not a controller reference":      func(s *corev1.Secret) { s.OwnerReferences[0].Controller = ptr.To(false) },
		"another type":                    func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque },
		"no credential":                   func(s *corev1.Secret) { delete(s.Data, CredentialKey) },
	} {
		sec := minted.DeepCopy()
		mutate(sec)
		_, err := render(&Extension{URL: "https://mgmt.example:9445", CABundle: ca, Stored: fake.NewClientBuilder().WithScheme(s).WithObjects(sec).Build()})
		if !errors.Is(err, ErrNoStoredCredential) {
			t.Errorf("%s: %v, want ErrNoStoredCredential", name, err)
		}
	}
	_, err = render(&Extension{URL: "https://mgmt.example:9445", CABundle: ca, Stored: fake.NewClientBuilder().WithScheme(s).Build()})
	if !errors.Is(err, ErrNoStoredCredential) {
		t.Errorf("no Secret: %v, want ErrNoStoredCredential", err)
	}
}
