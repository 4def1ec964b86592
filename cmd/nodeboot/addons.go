package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
)

// addonObjects are the documents of the input the add-on extension reads:
// FirstBootAddons, and the ConfigMaps and Secrets they may take manifests
// from. bootstrap/manifest ignores these kinds (except Secrets, which it
// keeps as data only).
type addonObjects struct {
	addons []client.Object
	others []client.Object
}

// readAddonObjects decodes, strictly, the FirstBootAddons, ConfigMaps and
// Secrets of the input; a FirstBootAddon that does not decode is an error
// naming it and the field.
func readAddonObjects(input []byte) (*addonObjects, error) {
	out := &addonObjects{}
	err := manifest.Documents(bytes.NewReader(input), func(raw []byte) error {
		var tm manifest.TypeMeta
		if yaml.Unmarshal(raw, &tm) != nil {
			return nil // manifest.Parse reports what is not an object.
		}
		var obj client.Object
		switch {
		case tm.Kind == "FirstBootAddon" && strings.HasPrefix(tm.APIVersion, addonsv1.GroupVersion.Group+"/"):
			obj = &addonsv1.FirstBootAddon{}
		case tm.Kind == "ConfigMap" && tm.APIVersion == "v1":
			obj = &corev1.ConfigMap{}
		case tm.Kind == "Secret" && tm.APIVersion == "v1":
			obj = &corev1.Secret{}
		default:
			return nil
		}
		js, err := yaml.YAMLToJSON(raw)
		if err == nil {
			var strict []error
			if strict, err = sigsjson.UnmarshalStrict(js, obj); err == nil && len(strict) > 0 {
				err = errors.Join(strict...)
			}
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", tm.Kind, tm.Metadata.Namespace, tm.Metadata.Name, err)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		if _, ok := obj.(*addonsv1.FirstBootAddon); ok {
			out.addons = append(out.addons, obj)
		} else {
			out.others = append(out.others, obj)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// extension is the controller's add-on extension reading the input's objects
// instead of a management cluster, or nil when the input has no
// FirstBootAddon (the output is then exactly what it was without this).
func (o *addonObjects) extension(opts addonsctrl.ExtensionOptions) (*addonsctrl.Extension, error) {
	if len(o.addons) == 0 {
		return nil, nil
	}
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := addonsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(o.addons, o.others...)...).Build()
	return addonsctrl.NewExtension(c, opts), nil
}
