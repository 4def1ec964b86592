package nodereport

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestReportKeepsConcurrentWrite: another writer (the reconciler marking
// the config paused) writes between the handler's read and its status
// write; the handler's write keeps it. A narrow check on a fake API;
// test/controllers runs the real reconciler and handler on a real API
// server.
func TestReportKeepsConcurrentWrite(t *testing.T) {
	e := newEnv(t)
	key := client.ObjectKey{Namespace: "ns", Name: "w-0"}
	fired := false
	e.h.Client = interceptor.NewClient(e.c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if !fired {
				fired = true
				cur := &bootstrapv1.KubeadmConfig{}
				if err := e.c.Get(ctx, key, cur); err != nil {
					return err
				}
				orig := cur.DeepCopy()
				conditions.Set(cur, metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionTrue, Reason: clusterv1.PausedReason,
					LastTransitionTime: metav1.NewTime(time.Now())})
				if err := e.c.Status().Patch(ctx, cur, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
					return err
				}
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	require.Equal(t, http.StatusAccepted, e.post("w-0", e.tokens["w-0"], `{"phase":"started"}`))
	require.True(t, fired)
	require.Equal(t, RunningReason, e.condition(t, "w-0").Reason)
	require.True(t, conditions.IsTrue(e.configOf(t, "w-0"), clusterv1.PausedCondition), "the other writer's Paused is kept")
}

func (e *env) configOf(t *testing.T, name string) *bootstrapv1.KubeadmConfig {
	t.Helper()
	c := &bootstrapv1.KubeadmConfig{}
	require.NoError(t, e.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, c))
	return c
}
