package addons

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/addons/catalog"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

var hexSHA256 = regexp.MustCompile(`^[a-f0-9]{64}$`)

// ValidateSpec checks what the CRD schema checks, and what only the catalog
// knows (built-in names and versions), returning the SourceValid reason for
// the first kind of problem found and every problem with its path.
func ValidateSpec(spec *addonsv1.FirstBootAddonSpec, p *field.Path) (string, field.ErrorList) {
	var errs field.ErrorList
	reason := addonsv1.InvalidSpecReason
	if _, err := metav1.LabelSelectorAsSelector(&spec.ClusterSelector); err != nil {
		errs = append(errs, field.Invalid(p.Child("clusterSelector"), spec.ClusterSelector, err.Error()))
	}
	var set []string
	if spec.Builtin != nil {
		set = append(set, "builtin")
	}
	if spec.Manifests != nil {
		set = append(set, "manifests")
	}
	if spec.URL != nil {
		set = append(set, "url")
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, "exactly one of builtin, manifests and url must be set"))
	case 1:
	default:
		for _, s := range set[1:] {
			errs = append(errs, field.Forbidden(p.Child(s), fmt.Sprintf("must not be set together with %s: exactly one source is allowed", p.Child(set[0]))))
		}
	}
	if spec.Order < 0 || spec.Order > 999 {
		errs = append(errs, field.Invalid(p.Child("order"), spec.Order, "must be between 0 and 999"))
	}
	if b := spec.Builtin; b != nil {
		bp := p.Child("builtin")
		if !slices.Contains(catalog.Names(), b.Name) {
			errs = append(errs, field.NotSupported(bp.Child("name"), b.Name, catalog.Names()))
			reason = addonsv1.UnknownBuiltinReason
		} else if versions, _ := catalog.Versions(b.Name); b.Version != "" && !slices.Contains(versions, b.Version) {
			errs = append(errs, field.NotSupported(bp.Child("version"), b.Version, versions))
			reason = addonsv1.UnknownBuiltinReason
		}
		if b.NodeLocalDNS != nil && b.Name != addonsv1.BuiltinNodeLocalDNS {
			errs = append(errs, field.Forbidden(bp.Child("nodeLocalDNS"), "applies only to the nodelocaldns add-on"))
		}
		if b.Flannel != nil && b.Name != addonsv1.BuiltinFlannel {
			errs = append(errs, field.Forbidden(bp.Child("flannel"), "applies only to the flannel add-on"))
		}
	}
	if m := spec.Manifests; m != nil {
		mp := p.Child("manifests")
		if m.Kind != addonsv1.ManifestsConfigMap && m.Kind != addonsv1.ManifestsSecret {
			errs = append(errs, field.NotSupported(mp.Child("kind"), m.Kind, []addonsv1.ManifestKind{addonsv1.ManifestsConfigMap, addonsv1.ManifestsSecret}))
		}
		if m.Name == "" {
			errs = append(errs, field.Required(mp.Child("name"), ""))
		}
	}
	if u := spec.URL; u != nil {
		up := p.Child("url")
		if parsed, err := url.Parse(u.URL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			errs = append(errs, field.Invalid(up.Child("url"), addons.RedactURL(u.URL), "must be an http or https URL"))
		}
		if u.Version != "" && !addons.ValidVersion(u.Version) {
			errs = append(errs, field.Invalid(up.Child("version"), u.Version, "must be letters, digits and '.-_+', at most 64"))
		}
		switch {
		case u.SHA256 == "":
			errs = append(errs, field.Required(up.Child("sha256"), "the node verifies what it fetches; give the manifest's sha256"))
		case !hexSHA256.MatchString(u.SHA256):
			errs = append(errs, field.Invalid(up.Child("sha256"), u.SHA256, "must be 64 lower-case hex digits"))
		}
	}
	return reason, errs
}

// validateAddon is ValidateSpec and the add-on's name, which the node's
// record and files are keyed by: a FirstBootAddon may have any name
// Kubernetes allows, an add-on only a DNS label.
func validateAddon(a *addonsv1.FirstBootAddon) (string, field.ErrorList) {
	reason, errs := ValidateSpec(&a.Spec, specPath)
	if !addons.ValidName(a.Name) {
		errs = append(field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), a.Name, "must be a DNS label (at most 63 lower-case letters, digits and '-') to name an add-on")}, errs...)
		reason = addonsv1.InvalidSpecReason
	}
	return reason, errs
}
