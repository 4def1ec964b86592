package scale_test

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestDataComparison holds BenchmarkManagerScale's byte comparison to what
// it claims: two managers' data for one config are the same when they
// differ only by the token each stored for it; one byte elsewhere, a token
// the manager did not store, or data carrying another token than the
// config's makes a difference.
func TestDataComparison(t *testing.T) {
	const (
		tokA = "abcdef.0123456789abcdef"
		tokB = "zyxwvu.fedcba9876543210"
		tokC = "qqqqqq.0000000000000000"
	)
	secret := func(value string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "c00"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "bootstrap.cluster.x-k8s.io/v1beta2", Kind: "KubeadmConfig", Name: "w", UID: "u", Controller: ptr.To(true)}}},
			Type: "cluster.x-k8s.io/secret",
			Data: map[string][]byte{"value": []byte(value), "format": []byte("cloud-config")},
		}
	}
	data := func(tok string) string {
		return "#cloud-config\njoin:\n  token: " + tok + "\n  caCertHashes: [sha256:0a]\n"
	}
	storedA := map[string]string{"abcdef": "0123456789abcdef"}
	storedB := map[string]string{"zyxwvu": "fedcba9876543210"}
	cabpk := mustNormalise(t, secret(data(tokA)), tokA, storedA)

	t.Run("own tokens", func(t *testing.T) {
		ours := mustNormalise(t, secret(data(tokB)), tokB, storedB)
		counts, diffs := compareData(map[string]dataSecret{"w": ours}, map[string]dataSecret{"w": cabpk})
		if len(diffs) > 0 || counts["cloud-config"] != 1 {
			t.Errorf("same data but for each side's own token: counts %v, diffs %v", counts, diffs)
		}
	})
	t.Run("one byte", func(t *testing.T) {
		// Every byte position outside the token, one at a time.
		base := data(tokB)
		at := strings.Index(base, tokB)
		for i := range len(base) {
			if i >= at && i < at+len(tokB) {
				continue
			}
			b := []byte(base)
			b[i] ^= 0x01
			ours := mustNormalise(t, secret(string(b)), tokB, storedB)
			if _, diffs := compareData(map[string]dataSecret{"w": ours}, map[string]dataSecret{"w": cabpk}); len(diffs) != 1 {
				t.Fatalf("byte %d changed: %d differences, want 1", i, len(diffs))
			}
		}
	})
	t.Run("another token in the data", func(t *testing.T) {
		ours := mustNormalise(t, secret(data(tokC)), tokB, storedB)
		if _, diffs := compareData(map[string]dataSecret{"w": ours}, map[string]dataSecret{"w": cabpk}); len(diffs) != 1 {
			t.Errorf("data with a token other than the config's: %v", diffs)
		}
	})
	t.Run("token not on the workload cluster", func(t *testing.T) {
		if _, err := normalise(secret(data(tokB)), tokB, storedA); err == nil {
			t.Error("a token the manager never created was normalised")
		}
		if _, err := normalise(secret(data(tokB)), "", storedB); err == nil {
			t.Error("a config without a token was normalised")
		}
	})
	t.Run("metadata", func(t *testing.T) {
		s := secret(data(tokB))
		s.OwnerReferences[0].Controller = nil
		s.Labels = nil
		ours := mustNormalise(t, s, tokB, storedB)
		if _, diffs := compareData(map[string]dataSecret{"w": ours}, map[string]dataSecret{"w": cabpk}); len(diffs) != 2 {
			t.Errorf("owner and labels changed: %v", diffs)
		}
	})
	t.Run("missing on either side", func(t *testing.T) {
		ours := mustNormalise(t, secret(data(tokB)), tokB, storedB)
		_, diffs := compareData(map[string]dataSecret{"x": ours}, map[string]dataSecret{"w": cabpk})
		if len(diffs) != 2 {
			t.Errorf("configs with data on one side only: %v", diffs)
		}
	})
	if !bytes.Contains(cabpk.data["value"], []byte(tokenPlaceholder)) {
		t.Error("the token was not replaced")
	}
}

func mustNormalise(t *testing.T, s *corev1.Secret, token string, stored map[string]string) dataSecret {
	t.Helper()
	d, err := normalise(s, token, stored)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
