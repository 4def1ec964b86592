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

// TestExtensionKeepsExistingCredential: with Existing set (the manager), new
// data for a config keeps the credential of the config's own Secret, so
// nodes booting from its earlier data are still heard; a Secret that is not
// the config's own (an earlier config of the same name, another type), or a
// credential weaker than the manager mints, is never kept, and without one a
// credential is minted.
func TestExtensionKeepsExistingCredential(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}}
	config := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: "ns", UID: "u-1"}}
	stored, err := NewCredentialSecret(config, cluster.Name)
	if err != nil {
		t.Fatal(err)
	}
	kept := string(stored.Data[CredentialKey])
	credential := func(objs ...*corev1.Secret) string {
		t.Helper()
		b := fake.NewClientBuilder().WithScheme(s)
		for _, o := range objs {
			b = b.WithObjects(o)
		}
		res := testenv.BuildVector(t, filepath.Join(testenv.VectorsDir(t), "cc-join-worker-minimal-v1.33"))
		ext := &Extension{URL: "https://mgmt.example:9445", CABundle: testenv.TestCABundle(t), Existing: b.Build()}
		if err := ext.MutatePlan(context.Background(), cluster, config, res); err != nil {
			t.Fatal(err)
		}
		if len(res.Secrets) != 1 || res.Secrets[0].Name != CredentialSecretName(config.Name) || len(res.Secrets[0].OwnerReferences) != 1 ||
			res.Secrets[0].OwnerReferences[0].UID != config.UID || res.Secrets[0].ResourceVersion != "" {
			t.Fatalf("the credential Secret the reconciler is to store: %+v", res.Secrets)
		}
		return string(res.Secrets[0].Data[CredentialKey])
	}
	if got := credential(stored.DeepCopy()); got != kept {
		t.Error("the config's own credential was not kept")
	}
	stale := stored.DeepCopy()
	stale.OwnerReferences[0].UID = "u-0"
	if got := credential(stale); got == kept || len(got) < 32 {
		t.Error("an earlier config's credential was kept")
	}
	weak := stored.DeepCopy()
	weak.Data[CredentialKey] = []byte("short-credential")
	if got := credential(weak); got == "short-credential" || len(got) < 32 {
		t.Error("a credential shorter than the manager mints was kept")
	}
	opaque := stored.DeepCopy()
	opaque.Type = corev1.SecretTypeOpaque
	if got := credential(opaque); got == kept || len(got) < 32 {
		t.Error("a Secret of another type was kept")
	}
	if got := credential(); got == kept || len(got) < 32 {
		t.Errorf("no Secret: credential %d characters", len(got))
	}
}
