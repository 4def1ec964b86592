package addons

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// AnnotationMaxBytes on a Cluster overrides ExtensionOptions.MaxBytes (the
// manager's --addons-max-bytes) for the bootstrap data of that Cluster's
// nodes that carry add-ons: a positive number of bytes, for infrastructure
// whose user-data limit is not EC2's 16 KiB (Azure and OpenStack 64 KiB,
// GCE 256 KiB).
const AnnotationMaxBytes = "nodeboot.dev/bootstrap-data-max-bytes"

// maxBytesLimit bounds the annotation: no provider takes more user data.
const maxBytesLimit = 64 << 20

// ExtensionOptions configure the Extension.
type ExtensionOptions struct {
	// Addons places the add-ons on the node (directory, kubeconfig, timeout).
	Addons addons.Options
	// MaxBytes, when positive, is the size budget of bootstrap data that
	// carries add-ons (16384 for EC2 user data). Rendering over it fails
	// with provisioning.ErrTooLarge; nothing is truncated.
	MaxBytes int
	// Compress asks the provisioner to compress bootstrap data that carries
	// add-ons (gzip user data for cloud-init, a gzip wrapper for Ignition v3)
	// where the provisioner says it can; CABPK's Ignition 2.3 dialect cannot.
	Compress bool
	// Fetch, when enabled, moves the add-on manifests of an init node whose
	// data would exceed MaxBytes to the manager's fetch endpoint instead of
	// failing with provisioning.ErrTooLarge.
	Fetch FetchOptions
	// APIReader reads, uncached, what the manager's cache does not hold
	// whole: the metadata of a Cluster's bootstrap data Secrets (which
	// add-ons its init data carried, carried.go) and existing fetch Secrets.
	// Nil uses Fetch.Reader, then the client.
	APIReader client.Reader
	// Workloads, when set, reads a workload cluster's record
	// (kube-system/nodeboot-addons) for a Cluster whose init data has no
	// record of the add-ons it carried (made before nodeboot wrote
	// AnnotationCarried, or deleted with its Machine since), so a joining
	// node's kubelet settings agree with the FirstBootAddon's status.
	Workloads WorkloadClusters
}

// Extension adds first-boot add-ons to the KubeadmConfig reconciler. It has
// the method set of controllers.Extension; wire it with
// reconciler.Extensions = append(reconciler.Extensions, addons.NewExtension(mgr.GetClient(), opts)).
type Extension struct {
	resolver Resolver
	opts     ExtensionOptions
}

// NewExtension returns an Extension reading FirstBootAddons, ConfigMaps and
// Secrets through c (the manager's client; it needs list/watch on
// firstbootaddons and get on configmaps and secrets).
func NewExtension(c client.Reader, opts ExtensionOptions) *Extension {
	return &Extension{resolver: Resolver{Client: c}, opts: opts}
}

// MutateConfig gives every node of the Cluster the kubelet settings its
// add-ons need. A Cluster no add-on selects is left untouched.
func (e *Extension) MutateConfig(ctx context.Context, cluster *clusterv1.Cluster, config *bootstrapv1.KubeadmConfig) error {
	selected, err := e.resolver.Selected(ctx, cluster)
	if err != nil || len(selected) == 0 {
		return classify(err)
	}
	dns, err := kubeletClusterDNS(selected, cluster, e.carriedCheck(ctx, cluster, config.Name))
	if err != nil || dns == nil {
		return classify(err)
	}
	return classify(setClusterDNS(config, dns))
}

// MutatePlan adds the Cluster's add-ons to the Plan of its init
// control-plane node. Joining nodes and Clusters without add-ons are left
// untouched.
func (e *Extension) MutatePlan(ctx context.Context, cluster *clusterv1.Cluster, config *bootstrapv1.KubeadmConfig, result *bootstrap.Result) error {
	if result == nil || result.Plan == nil || result.Plan.Role != "init" {
		return nil
	}
	selected, err := e.resolver.Selected(ctx, cluster)
	if err != nil || len(selected) == 0 {
		return classify(err)
	}
	list := make([]addons.Addon, 0, len(selected))
	for i := range selected {
		a, err := e.resolver.Resolve(ctx, &selected[i], cluster)
		if err != nil {
			return classify(err)
		}
		list = append(list, *a)
	}
	// The data is nodeboot's now: kubeadm init need not print its token.
	result.QuietInitToken()
	if result.DataAnnotations == nil {
		result.DataAnnotations = map[string]string{}
	}
	result.DataAnnotations[AnnotationCarried] = carriedAnnotation(list)
	restore := planSnapshot(result.Plan)
	if err := addons.Contribute(result.Plan, list, e.opts.Addons); err != nil {
		var ps provisioning.Problems
		if errors.As(err, &ps) {
			return reconcile.TerminalError(contributeProblems(ps, list))
		}
		return reconcile.TerminalError(fmt.Errorf("KubeadmConfig %s/%s: %w", config.Namespace, config.Name, err))
	}
	budget, err := MaxBytes(cluster, e.opts.MaxBytes)
	if err != nil {
		return reconcile.TerminalError(err)
	}
	if budget > 0 && (result.Options.MaxBytes == 0 || budget < result.Options.MaxBytes) {
		result.Options.MaxBytes = budget
	}
	if e.opts.Compress && !result.Options.Compress && canCompress(result) {
		result.Options.Compress = true
	}
	return e.fetchFallback(ctx, cluster, config, result, list, restore)
}

// MaxBytes is the size budget of the Cluster's bootstrap data that carries
// add-ons: the Cluster's AnnotationMaxBytes when set, otherwise def (the
// manager's --addons-max-bytes). An annotation that is not a whole number of
// bytes between 1 and 64 MiB is a *bootstrap.InvalidError naming it (never
// its value), so the KubeadmConfig gets a terminal condition.
func MaxBytes(cluster *clusterv1.Cluster, def int) (int, error) {
	v, ok := cluster.GetAnnotations()[AnnotationMaxBytes]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxBytesLimit {
		return 0, &bootstrap.InvalidError{Problems: []bootstrap.ObjectProblem{{
			Object: bootstrap.ObjectRef{Kind: "Cluster", Namespace: cluster.Namespace, Name: cluster.Name},
			Problem: provisioning.Problem{
				Path:     provisioning.NewPath("metadata", "annotations").Key(AnnotationMaxBytes),
				Message:  fmt.Sprintf("must be a whole number of bytes from 1 to %d", maxBytesLimit),
				Severity: provisioning.SeverityError,
			},
		}}}
	}
	return n, nil
}

// canCompress asks the result's provisioner, through the registry, whether it
// can compress this Plan (CABPK's Ignition 2.3 dialect cannot); it never
// guesses from format names.
func canCompress(result *bootstrap.Result) bool {
	p, err := provisioning.Get(result.Format)
	if err != nil {
		return false
	}
	opts := result.Options
	opts.Compress = true
	for _, pr := range p.Check(result.Plan, opts).Errors() {
		if errors.Is(pr, provisioning.ErrCompressionUnsupported) {
			return false
		}
	}
	return true
}

// classify makes invalid add-ons terminal errors (the FirstBootAddon must
// change) and leaves a missing source retryable (it may be created).
func classify(err error) error {
	var se *SpecError
	if errors.As(err, &se) && !se.NotFound {
		return reconcile.TerminalError(err)
	}
	return err
}

// addonFields maps the fields addons.Validate names on an Addon to the
// FirstBootAddon fields they come from.
var addonFields = map[string]provisioning.Path{
	"name": provisioning.NewPath("metadata", "name"), "version": provisioning.NewPath("spec", "builtin", "version"),
	"order": provisioning.NewPath("spec", "order"), "url": provisioning.NewPath("spec", "url", "url"),
	"sha256": provisioning.NewPath("spec", "url", "sha256"), "manifest": provisioning.NewPath("spec", "manifests"),
}

// contributeProblems turns what addons.Contribute rejected into an
// *bootstrap.InvalidError naming each FirstBootAddon and its field, so the
// KubeadmConfig gets a condition that points at the add-on to fix.
func contributeProblems(ps provisioning.Problems, list []addons.Addon) error {
	invalid := &bootstrap.InvalidError{}
	for _, p := range ps.Errors() {
		op := bootstrap.ObjectProblem{Object: bootstrap.ObjectRef{Kind: "FirstBootAddon"}, Problem: p}
		// Each add-on's Origin is a path in its FirstBootAddon, so a
		// problem's path says which object and field it is about.
		for _, a := range list {
			field, ok := p.Path.TrimPrefix(a.Origin)
			if !ok || a.Origin.IsZero() {
				continue
			}
			name := field.Elements()
			op.Object, op.Path = a.Origin.Object(), provisioning.NewPath("spec")
			if len(name) > 0 {
				if f, known := addonFields[name[0].Name]; known {
					op.Path = f
				}
				if name[0].Name == "version" && a.URL != "" {
					op.Path = provisioning.NewPath("spec", "url", "version")
				}
			}
			break
		}
		invalid.Problems = append(invalid.Problems, op)
	}
	return invalid
}
