package addons

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// TestApplyErrorRedactedInStatus: a failed apply records kubectl's error
// output; a password it quotes and the control and bidi characters in it
// reach neither the per-cluster status nor the Applied condition.
func TestApplyErrorRedactedInStatus(t *testing.T) {
	const secret = "Sup3rS3cretValue"
	sha := addons.Digest([]byte("x"))
	initialized := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "default", Labels: map[string]string{"cni": "flannel"}},
		Status: clusterv1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue, Reason: "x"}}}}
	result := `failed: The Secret "db" is invalid: stringData.password: Invalid value: "` + secret + `": too long ` +
		"\x1b]0;pwned\x07 \u202etxt.exe"
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: addons.RecordName, Namespace: addons.RecordNamespace},
		Data: map[string]string{"u.sha256": "", "u.result": result, "u.version": "-"}}
	r := &FirstBootAddonReconciler{Client: fakeClient(t, initialized, addon("u", addonsv1.FirstBootAddonSpec{URL: &addonsv1.URLSource{URL: "https://h/x.yaml", SHA256: sha}})),
		Workloads: fakeWorkloads{c: fakeClient(t, record)}}
	got, _ := reconcileOne(t, r, "u")
	require.Len(t, got.Status.Clusters, 1)
	require.Equal(t, `failed: The Secret "db" is invalid: stringData.password: [redacted] (invalid value): too long \x1b]0;pwned\x07 \u202etxt.exe`,
		got.Status.Clusters[0].Message)
	cond := meta.FindStatusCondition(got.Status.Conditions, addonsv1.AppliedCondition)
	require.NotNil(t, cond)
	status, err := json.Marshal(got.Status)
	require.NoError(t, err)
	for _, bad := range []string{secret, "\x1b", "\u202e", `\u001b`} {
		require.NotContains(t, string(status), bad)
		require.NotContains(t, cond.Message, bad)
	}
}
