package addons

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/addons/catalog"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

var specPath = field.NewPath("spec")

// Resolver finds the add-ons of a Cluster and resolves them into what the
// node gets. It reads FirstBootAddons, ConfigMaps and Secrets in the
// management cluster.
type Resolver struct {
	Client client.Reader
}

func objectRef(a *addonsv1.FirstBootAddon) bootstrap.ObjectRef {
	return bootstrap.ObjectRef{Kind: "FirstBootAddon", Namespace: a.Namespace, Name: a.Name}
}

// Selects reports whether the add-on's selector matches the Cluster. An empty
// selector matches nothing, as for a ClusterResourceSet.
func Selects(a *addonsv1.FirstBootAddon, cluster *clusterv1.Cluster) (bool, error) {
	if a.Namespace != cluster.Namespace {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&a.Spec.ClusterSelector)
	if err != nil {
		return false, &SpecError{Object: objectRef(a), Reason: addonsv1.InvalidSpecReason,
			Errs: field.ErrorList{field.Invalid(specPath.Child("clusterSelector"), a.Spec.ClusterSelector, err.Error())}}
	}
	return !sel.Empty() && sel.Matches(labels.Set(cluster.Labels)), nil
}

// Selected returns the add-ons selecting the Cluster, by order then name.
func (r *Resolver) Selected(ctx context.Context, cluster *clusterv1.Cluster) ([]addonsv1.FirstBootAddon, error) {
	var list addonsv1.FirstBootAddonList
	if err := r.Client.List(ctx, &list, client.InNamespace(cluster.Namespace)); err != nil {
		return nil, fmt.Errorf("list FirstBootAddons in namespace %s: %w", cluster.Namespace, err)
	}
	var out []addonsv1.FirstBootAddon
	for i := range list.Items {
		a := &list.Items[i]
		if !a.DeletionTimestamp.IsZero() {
			continue
		}
		ok, err := Selects(a, cluster)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, *a)
		}
	}
	slices.SortFunc(out, func(a, b addonsv1.FirstBootAddon) int {
		return cmp.Or(cmp.Compare(a.Spec.Order, b.Spec.Order), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// Resolve resolves an add-on for one Cluster: the bytes (or URL and digest)
// its init node gets. Problems come back as a *SpecError naming the fields.
func (r *Resolver) Resolve(ctx context.Context, a *addonsv1.FirstBootAddon, cluster *clusterv1.Cluster) (*addons.Addon, error) {
	if reason, errs := validateAddon(a); len(errs) > 0 {
		return nil, &SpecError{Object: objectRef(a), Reason: reason, Errs: errs}
	}
	out := &addons.Addon{Name: a.Name, Order: a.Spec.Order, Origin: provisioning.Path{}.In(objectRef(a))}
	switch s := a.Spec; {
	case s.Builtin != nil:
		rendered, err := catalog.Render(s.Builtin.Name, s.Builtin.Version, builtinParams(s.Builtin, cluster))
		if err != nil {
			return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.InvalidSpecReason, Errs: field.ErrorList{paramError(s.Builtin, cluster, err)}}
		}
		out.Version, out.Manifest = rendered.Version, rendered.Manifest
	case s.Manifests != nil:
		m, err := r.manifests(ctx, a)
		if err != nil {
			return nil, err
		}
		out.Manifest = m
	case s.URL != nil:
		out.Version, out.URL, out.SHA256 = s.URL.Version, s.URL.URL, s.URL.SHA256
	}
	return out, nil
}

// Summary is the cluster-independent part of an add-on, for its status.
type Summary struct {
	// Source names where the manifests come from; a URL appears without
	// its query, fragment and userinfo (addons.RedactURL).
	Source  string
	Version string
	// Digest is "sha256:<hex>" of the manifests (ConfigMap, Secret), the
	// declared digest (URL) or the template (built-in).
	Digest string
}

// Summarize validates an add-on and computes its Summary.
func (r *Resolver) Summarize(ctx context.Context, a *addonsv1.FirstBootAddon) (*Summary, error) {
	if reason, errs := validateAddon(a); len(errs) > 0 {
		return nil, &SpecError{Object: objectRef(a), Reason: reason, Errs: errs}
	}
	switch s := a.Spec; {
	case s.Builtin != nil:
		v, tmpl, err := catalog.Template(s.Builtin.Name, s.Builtin.Version)
		if err != nil {
			return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.UnknownBuiltinReason,
				Errs: field.ErrorList{field.Invalid(specPath.Child("builtin"), s.Builtin.Name, err.Error())}}
		}
		if err := validateBuiltinParams(s.Builtin); err != nil {
			return nil, &SpecError{Object: objectRef(a), Reason: addonsv1.InvalidSpecReason, Errs: field.ErrorList{paramError(s.Builtin, nil, err)}}
		}
		return &Summary{Source: "builtin " + s.Builtin.Name + " " + v, Version: v, Digest: "sha256:" + addons.Digest(tmpl)}, nil
	case s.Manifests != nil:
		m, err := r.manifests(ctx, a)
		if err != nil {
			return nil, err
		}
		return &Summary{Source: string(s.Manifests.Kind) + " " + s.Manifests.Name, Digest: "sha256:" + addons.Digest(m)}, nil
	default:
		return &Summary{Source: "url " + addons.RedactURL(s.URL.URL), Version: s.URL.Version, Digest: "sha256:" + s.URL.SHA256}, nil
	}
}
