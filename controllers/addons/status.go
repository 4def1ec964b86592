package addons

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// reconcileClusters fills status.clusters and the Applied condition; it
// reports whether some Cluster has yet to report.
func (r *FirstBootAddonReconciler) reconcileClusters(ctx context.Context, resolver *Resolver, a *addonsv1.FirstBootAddon) (bool, error) {
	var clusters clusterv1.ClusterList
	if err := r.Client.List(ctx, &clusters, client.InNamespace(a.Namespace)); err != nil {
		return false, fmt.Errorf("list Clusters in namespace %s: %w", a.Namespace, err)
	}
	var out []addonsv1.ClusterAddonStatus
	counts := map[addonsv1.AddonPhase]int{}
	var failures []string
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if ok, _ := Selects(a, c); !ok {
			continue
		}
		st := r.clusterStatus(ctx, resolver, a, c)
		counts[st.Phase]++
		if st.Phase == addonsv1.AddonFailed {
			failures = append(failures, c.Name+": "+st.Message)
		}
		out = append(out, st)
	}
	total := len(out)
	if len(out) > maxStatusClusters {
		// The CRD holds at most this many (a longer list fails the whole
		// status write); the condition still counts every Cluster, and
		// failures come first so none hides behind the cut.
		slices.SortStableFunc(out, func(x, y addonsv1.ClusterAddonStatus) int {
			return cmp.Compare(phaseRank(x.Phase), phaseRank(y.Phase))
		})
		out = out[:maxStatusClusters]
	}
	a.Status.Clusters = out
	pending := counts[addonsv1.AddonPending] + counts[addonsv1.AddonUnknown]
	switch {
	case total == 0:
		setCondition(a, addonsv1.AppliedCondition, metav1.ConditionFalse, addonsv1.NoClustersReason, "the cluster selector matches no Cluster")
	case len(failures) > 0:
		setCondition(a, addonsv1.AppliedCondition, metav1.ConditionFalse, addonsv1.ApplyFailedReason, strings.Join(failures, "; "))
	case pending > 0:
		setCondition(a, addonsv1.AppliedCondition, metav1.ConditionFalse, addonsv1.PendingReason,
			fmt.Sprintf("%d of %d Clusters have not reported the add-on yet", pending, total))
	default:
		setCondition(a, addonsv1.AppliedCondition, metav1.ConditionTrue, addonsv1.AppliedReason, "")
	}
	return pending > 0, nil
}

// clusterStatus is the add-on on one Cluster, from the record its init node
// wrote in the workload cluster.
func (r *FirstBootAddonReconciler) clusterStatus(ctx context.Context, resolver *Resolver, a *addonsv1.FirstBootAddon, c *clusterv1.Cluster) addonsv1.ClusterAddonStatus {
	st := addonsv1.ClusterAddonStatus{Name: c.Name}
	resolved, err := resolver.Resolve(ctx, a, c)
	if err != nil {
		st.Phase, st.Message = addonsv1.AddonFailed, "cannot be delivered: "+err.Error()
		return st
	}
	expected := resolved.SHA256
	if expected == "" {
		expected = addons.Digest(resolved.Manifest)
	}
	st.Digest = "sha256:" + expected
	if !conditions.IsTrue(c, clusterv1.ClusterControlPlaneInitializedCondition) {
		st.Phase, st.Message = addonsv1.AddonPending, "the control plane is not initialized yet"
		return st
	}

	if r.Workloads == nil {
		st.Phase, st.Message = addonsv1.AddonUnknown, "no access to workload clusters is configured"
		return st
	}
	wc, err := r.Workloads.GetUncachedClient(ctx, client.ObjectKeyFromObject(c))
	if err != nil {
		st.Phase, st.Message = addonsv1.AddonUnknown, "workload cluster not reachable: "+err.Error()
		return st
	}
	var cm corev1.ConfigMap
	err = wc.Get(ctx, client.ObjectKey{Namespace: addons.RecordNamespace, Name: addons.RecordName}, &cm)
	if (err == nil || apierrors.IsNotFound(err)) && !recorded(cm.Data, a.Name) {
		// Not recorded: was it in the init node's data at all? The same
		// question, answered the same way, as a joining node's kubelet
		// settings (kubelet.go).
		init, lerr := initCarried(ctx, r.apiReader(), c, "")
		if lerr != nil {
			st.Phase, st.Message = addonsv1.AddonUnknown, lerr.Error()
			return st
		}
		if !(delivery{init: init, record: cm.Data}).carried(a, c) {
			st.Phase, st.Message = addonsv1.AddonFailed, notDelivered
			return st
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		st.Phase, st.Message = addonsv1.AddonPending, "no ConfigMap kube-system/nodeboot-addons in the workload cluster yet"
		return st
	case err != nil:
		st.Phase, st.Message = addonsv1.AddonUnknown, "read ConfigMap kube-system/nodeboot-addons: "+err.Error()
		return st
	}
	rec, ok := addons.ParseRecord(cm.Data)[a.Name]
	if !ok || rec.Result == "" {
		st.Phase, st.Message = addonsv1.AddonPending, "the node has not recorded this add-on"
		return st
	}
	if rec.SHA256 != "" {
		st.AppliedDigest = "sha256:" + rec.SHA256
	}
	switch {
	case !rec.Applied():
		// The apply step redacts the URLs it records (an older step did
		// not), but not the kubectl output it records on failure.
		st.Phase, st.Message = addonsv1.AddonFailed, addons.RedactResult(rec.Result)
	case rec.SHA256 != expected:
		st.Phase, st.Message = addonsv1.AddonApplied, "the node applied an earlier revision; first-boot add-ons are not re-applied"
	default:
		st.Phase = addonsv1.AddonApplied
	}
	return st
}

// notDelivered is the status of an add-on the first control-plane node's
// data did not carry (delivery.carried) and that is not in its record.
const notDelivered = "never applied: the first control-plane node's data was made without it (it was created, or came to select the Cluster, later), and first-boot add-ons reach only that node"

// recorded reports whether the record holds a result for the add-on.
func recorded(data map[string]string, name string) bool {
	rec, ok := addons.ParseRecord(data)[name]
	return ok && rec.Result != ""
}

// maxStatusClusters is the CRD's bound on status.clusters.
const maxStatusClusters = 1000

// phaseRank orders status.clusters when it is cut: failures, then what is
// pending or unknown, then the applied.
func phaseRank(p addonsv1.AddonPhase) int {
	switch p {
	case addonsv1.AddonFailed:
		return 0
	case addonsv1.AddonApplied:
		return 2
	}
	return 1
}
