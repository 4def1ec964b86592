package nodeauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const typ corev1.SecretType = "test/credential"

func secret(config, uid, token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: config + ".cred", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Pod", Name: "other"},
			{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "KubeadmConfig", Name: config, UID: types.UID("uid-" + uid), Controller: ptr.To(true)}}},
		Type: typ,
		Data: map[string][]byte{"token": []byte(token), "manifest": []byte(strings.Repeat("m", 1<<20))},
	}
}

// TestTransform: the informer keeps the token's digest and the controller
// reference only: neither the token nor any other data.
func TestTransform(t *testing.T) {
	x := &Index{Type: typ, TokenKey: "token"}
	out, err := x.Transform(secret("cp-0", "cp-0", "s3cr3t"))
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*corev1.Secret)
	if len(s.Data) != 1 || len(s.Data[digestKey]) != 32 || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "KubeadmConfig" {
		t.Fatalf("kept %d data keys, %d owner references", len(s.Data), len(s.OwnerReferences))
	}
	for _, v := range s.Data {
		if strings.Contains(string(v), "s3cr3t") {
			t.Fatal("the token is kept")
		}
	}
	// The informer's handlers get what its store holds, transformed.
	again, _ := x.Transform(out)
	if d := again.(*corev1.Secret).Data[digestKey]; string(d) != string(s.Data[digestKey]) {
		t.Fatal("a transformed Secret loses its digest when transformed again")
	}
}

// TestAuthenticate: a synced index accepts the config's token, refuses a
// forged one, the stale Secret of an earlier config of that name, and one
// removed through an informer tombstone; before it synced it is not ready.
func TestAuthenticate(t *testing.T) {
	s := runtime.NewScheme()
	if err := bootstrapv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp-0", UID: "uid-cp-0"}},
		&bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp-1", UID: "uid-now"}},
	).Build()
	x := &Index{Type: typ, TokenKey: "token", Configs: c, Wait: 20 * time.Millisecond}
	ctx := context.Background()
	if _, err := x.Authenticate(ctx, "ns", "cp-0", "cp-0.cred", "t0"); !errors.Is(err, ErrNotReady) {
		t.Fatalf("before sync: %v", err)
	}
	x.Add(secret("cp-0", "cp-0", "t0"))
	x.Add(secret("cp-1", "earlier", "t1"))
	x.MarkSynced()
	if cfg, err := x.Authenticate(ctx, "ns", "cp-0", "cp-0.cred", "t0"); err != nil || cfg.Name != "cp-0" {
		t.Fatalf("the config's token: %v", err)
	}
	for _, tc := range []struct{ config, token string }{{"cp-0", "t1"}, {"cp-1", "t1"}, {"cp-9", "t0"}} {
		if _, err := x.Authenticate(ctx, "ns", tc.config, tc.config+".cred", tc.token); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("%s with %s: %v", tc.config, tc.token, err)
		}
	}
	x.Delete(toolscache.DeletedFinalStateUnknown{Key: "ns/cp-0.cred", Obj: secret("cp-0", "cp-0", "t0")})
	if _, err := x.Authenticate(ctx, "ns", "cp-0", "cp-0.cred", "t0"); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("after delete: %v", err)
	}
}
