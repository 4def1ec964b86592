package addons

import (
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

// AnnotationCarried on a bootstrap data Secret lists the FirstBootAddons
// that data carries: their names, sorted and comma-separated (names are DNS
// labels). Only the data of a Cluster's first control-plane node carries
// add-ons, so only its Secret has it, written in the same write as the data
// (bootstrap.Result.DataAnnotations).
//
// It answers "did this add-on reach the Cluster" from the data itself.
// Time cannot: the init node's data is built minutes before the Cluster's
// ControlPlaneInitialized condition turns True, `clusterctl move` resets that
// condition's time, and a FirstBootAddon deleted and re-created (GitOps) is
// newer than both. Names, not UIDs, for that last reason.
const AnnotationCarried = "nodeboot.dev/first-boot-addons"

// carriedAnnotation is AnnotationCarried's value for list.
func carriedAnnotation(list []addons.Addon) string {
	names := make([]string, 0, len(list))
	for _, a := range list {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}

// delivery is what is known of which add-ons reached one Cluster's first
// control-plane node.
type delivery struct {
	// init holds the names the init node's data carried (AnnotationCarried);
	// nil when no data Secret of the Cluster has the annotation (data made
	// before nodeboot recorded it, or deleted with its Machine since).
	init map[string]bool
	// record is the data of the workload cluster's record ConfigMap
	// (kube-system/nodeboot-addons); nil when not read.
	record map[string]string
}

// carried reports whether the add-on reached the Cluster: the node recorded
// a result for it, or the init data's annotation lists its name. Where
// neither exists, it falls back to time: the add-on was carried unless it
// was created after the control plane was initialized.
func (d delivery) carried(a *addonsv1.FirstBootAddon, cluster *clusterv1.Cluster) bool {
	switch {
	case d.init[a.Name] || recorded(d.record, a.Name):
		return true
	case d.init != nil:
		return false
	}
	return !createdAfterInit(a, cluster)
}

// initCarried reads AnnotationCarried from the Cluster's bootstrap data
// Secrets, skipping the one named skip (a config's own data, being built
// again). It reads metadata only, through r, which should be uncached: the
// manager's cache drops the annotations of data Secrets. The result is nil
// when no Secret has the annotation.
func initCarried(ctx context.Context, r client.Reader, cluster *clusterv1.Cluster, skip string) (map[string]bool, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := r.List(ctx, list, client.InNamespace(cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		return nil, fmt.Errorf("list bootstrap data Secrets of Cluster %s/%s: %w", cluster.Namespace, cluster.Name, err)
	}
	var names map[string]bool
	for i := range list.Items {
		s := &list.Items[i]
		v, ok := s.Annotations[AnnotationCarried]
		if !ok || s.Name == skip {
			continue
		}
		// A bootstrap data Secret is controlled by its KubeadmConfig.
		if c := metav1.GetControllerOf(s); c == nil || c.Kind != "KubeadmConfig" {
			continue
		}
		if names == nil {
			names = map[string]bool{}
		}
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names[n] = true
			}
		}
	}
	return names, nil
}

// workloadRecord reads the record ConfigMap's data from the workload
// cluster; nil when there is none yet.
func workloadRecord(ctx context.Context, w WorkloadClusters, cluster *clusterv1.Cluster) (map[string]string, error) {
	wc, err := w.GetUncachedClient(ctx, client.ObjectKeyFromObject(cluster))
	if err != nil {
		return nil, fmt.Errorf("workload cluster %s/%s not reachable: %w", cluster.Namespace, cluster.Name, err)
	}
	var cm corev1.ConfigMap
	err = wc.Get(ctx, client.ObjectKey{Namespace: addons.RecordNamespace, Name: addons.RecordName}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read ConfigMap %s/%s of Cluster %s/%s: %w", addons.RecordNamespace, addons.RecordName, cluster.Namespace, cluster.Name, err)
	}
	return cm.Data, nil
}

// carriedCheck is the Extension's delivery check for one build of config's
// data, read once on first use: the init data's annotation (other configs'
// Secrets only) and, when that is missing on an initialized Cluster and
// workload clusters are configured, the workload record.
func (e *Extension) carriedCheck(ctx context.Context, cluster *clusterv1.Cluster, config string) func(*addonsv1.FirstBootAddon) (bool, error) {
	var d *delivery
	return func(a *addonsv1.FirstBootAddon) (bool, error) {
		if d == nil {
			init, err := initCarried(ctx, e.apiReader(), cluster, config)
			if err != nil {
				return false, err
			}
			next := delivery{init: init}
			if init == nil && e.opts.Workloads != nil && conditions.IsTrue(cluster, clusterv1.ClusterControlPlaneInitializedCondition) {
				// The data is written once: an unreachable workload
				// cluster is retried, not guessed around.
				if next.record, err = workloadRecord(ctx, e.opts.Workloads, cluster); err != nil {
					return false, err
				}
			}
			d = &next
		}
		return d.carried(a, cluster), nil
	}
}

// apiReader reads what the manager's cache does not hold whole: the
// Cluster's data Secrets' metadata and existing fetch Secrets.
func (e *Extension) apiReader() client.Reader {
	switch {
	case e.opts.APIReader != nil:
		return e.opts.APIReader
	case e.opts.Fetch.Reader != nil:
		return e.opts.Fetch.Reader
	}
	return e.resolver.Client
}

// apiReader is r.APIReader, or r.Client when that is unset.
func (r *FirstBootAddonReconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
