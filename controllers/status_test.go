package controllers

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	nodebootv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// TestMergeStatus: after a conflict, this reconcile's changes are carried
// over onto the status another writer left. The reconciler's conditions are
// its own; NodeBootstrapped is the nodes', and a report written meanwhile
// wins over the Pending of data built before it; Ready is summarised again.
// (test/controllers runs the real race on the API server.)
func TestMergeStatus(t *testing.T) {
	at := metav1.NewTime(time.Unix(1000, 0))
	cond := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: at}
	}
	config := func(cs ...metav1.Condition) *bootstrapv1.KubeadmConfig {
		c := &bootstrapv1.KubeadmConfig{}
		c.Status.Conditions = cs
		return c
	}
	pending := cond(nodebootv1.NodeBootstrappedCondition, metav1.ConditionUnknown, nodebootv1.BootstrapPendingReason, "waiting")
	running := cond(nodebootv1.NodeBootstrappedCondition, metav1.ConditionFalse, nodebootv1.BootstrapRunningReason, "started")
	failed := cond(nodebootv1.NodeBootstrappedCondition, metav1.ConditionFalse, nodebootv1.BootstrapFailedReason, "kubeadm exited 3")
	dataOut := cond(bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigDataSecretAvailableReason, "")
	noData := cond(bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.KubeadmConfigDataSecretNotAvailableReason, "waiting")
	certs := cond(bootstrapv1.KubeadmConfigCertificatesAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigCertificatesAvailableReason, "")
	warnings := cond(nodebootv1.RenderWarningsCondition, metav1.ConditionTrue, nodebootv1.CABPKHazardsReason, "spec.files[0]")

	for _, tc := range []struct {
		name                 string
		before, ours, theirs *bootstrapv1.KubeadmConfig
		want                 map[string]string // type: reason
		absent               []string
		readyStatus          metav1.ConditionStatus
	}{
		{
			name:   "a report during the first build wins over its Pending",
			before: config(noData),
			ours:   config(dataOut, certs, pending),
			theirs: config(noData, failed),
			want: map[string]string{
				bootstrapv1.KubeadmConfigDataSecretAvailableCondition: bootstrapv1.KubeadmConfigDataSecretAvailableReason,
				nodebootv1.NodeBootstrappedCondition:                  nodebootv1.BootstrapFailedReason,
			},
			readyStatus: metav1.ConditionFalse,
		},
		{
			name:   "a report while the reconciler changes something else",
			before: config(dataOut, certs, running),
			ours:   config(dataOut, certs, running, warnings),
			theirs: config(dataOut, certs, failed),
			want: map[string]string{
				nodebootv1.RenderWarningsCondition:   nodebootv1.CABPKHazardsReason,
				nodebootv1.NodeBootstrappedCondition: nodebootv1.BootstrapFailedReason,
			},
			readyStatus: metav1.ConditionFalse,
		},
		{
			name:   "nothing written meanwhile: ours",
			before: config(dataOut, certs, running),
			ours:   config(dataOut, certs, running, warnings),
			theirs: config(dataOut, certs, running),
			want: map[string]string{
				nodebootv1.RenderWarningsCondition:   nodebootv1.CABPKHazardsReason,
				nodebootv1.NodeBootstrappedCondition: nodebootv1.BootstrapRunningReason,
			},
			readyStatus: metav1.ConditionTrue,
		},
		{
			name:        "a condition removed meanwhile that we left alone stays removed",
			before:      config(dataOut, certs, warnings),
			ours:        config(dataOut, certs, warnings),
			theirs:      config(dataOut, certs),
			absent:      []string{nodebootv1.RenderWarningsCondition},
			readyStatus: metav1.ConditionTrue,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := tc.ours.DeepCopy()
			mergeStatus(tc.before, ours, tc.theirs)
			for typ, reason := range tc.want {
				if got := conditions.GetReason(ours, typ); got != reason {
					t.Errorf("%s: reason %q, want %q", typ, got, reason)
				}
			}
			for _, typ := range tc.absent {
				if conditions.Has(ours, typ) {
					t.Errorf("%s is still there", typ)
				}
			}
			if r := conditions.Get(ours, bootstrapv1.KubeadmConfigReadyCondition); r == nil || r.Status != tc.readyStatus {
				t.Errorf("Ready %+v, want %s", r, tc.readyStatus)
			}
		})
	}
}

// TestPatchConfigKeepsConcurrentReport: the report handler writes a failure
// between the reconciler's read and its status write; the write keeps it.
// A narrow check of patchConfig on a fake API; test/controllers runs the
// real reconciler and handler against a real API server.
func TestPatchConfigKeepsConcurrentReport(t *testing.T) {
	s := runtime.NewScheme()
	if err := bootstrapv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "ns", Name: "w"}
	fc := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&bootstrapv1.KubeadmConfig{}).
		WithObjects(&bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}).Build()
	ctx := context.Background()
	fired := false
	wc := interceptor.NewClient(fc, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if !fired {
				fired = true
				// What the handler does with a failed report.
				cur := &bootstrapv1.KubeadmConfig{}
				if err := fc.Get(ctx, key, cur); err != nil {
					return err
				}
				orig := cur.DeepCopy()
				conditions.Set(cur, metav1.Condition{Type: nodebootv1.NodeBootstrappedCondition, Status: metav1.ConditionFalse,
					Reason: nodebootv1.BootstrapFailedReason, Message: "kubeadm exited 3"})
				if err := SetReady(cur); err != nil {
					return err
				}
				if err := fc.Status().Patch(ctx, cur, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
					return err
				}
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	r := &Reconciler{Client: wc, APIReader: fc}
	before := &bootstrapv1.KubeadmConfig{}
	if err := fc.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	config := before.DeepCopy()
	markDataSecretAvailable(config)
	markCertificatesAvailable(config)
	conditions.Set(config, metav1.Condition{Type: nodebootv1.NodeBootstrappedCondition, Status: metav1.ConditionUnknown, Reason: nodebootv1.BootstrapPendingReason})
	if err := r.patchConfig(ctx, before, config, nil); err != nil {
		t.Fatal(err)
	}
	got := &bootstrapv1.KubeadmConfig{}
	if err := fc.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if c := conditions.Get(got, nodebootv1.NodeBootstrappedCondition); c == nil || c.Reason != nodebootv1.BootstrapFailedReason {
		t.Errorf("NodeBootstrapped %+v, want the report's Failed", c)
	}
	if c := conditions.Get(got, bootstrapv1.KubeadmConfigReadyCondition); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v, want False with the failure", c)
	}
	if !conditions.IsTrue(got, bootstrapv1.KubeadmConfigDataSecretAvailableCondition) {
		t.Errorf("DataSecretAvailable %+v, want the reconciler's True", conditions.Get(got, bootstrapv1.KubeadmConfigDataSecretAvailableCondition))
	}
}
