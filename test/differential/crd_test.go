package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/yaml"
)

// The API server validates a KubeadmConfig against its CRD's OpenAPI schema
// (MinLength, MaxLength, Enum, Minimum/Maximum, MinProperties, ...) and its
// CEL rules (partitionType, exactly one of layout/diskLayout, unique
// extraArgs names) before CABPK's webhook sees it. crdValidator does the
// same with the apiextensions-apiserver code and Cluster API v1.14.2's own
// CRD, so the generators can drop exactly what a real cluster refuses.
type crdValidator struct {
	schema     validation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

var (
	crdOnce sync.Once
	crdVal  *crdValidator
	crdErr  error
)

// crdPath is CABPK v1.14.2's KubeadmConfig CRD in the module cache.
func crdPath() string {
	mod := os.Getenv("GOMODCACHE")
	if mod == "" {
		mod = filepath.Join(os.Getenv("HOME"), "go", "pkg", "mod")
	}
	return filepath.Join(mod, "sigs.k8s.io", "cluster-api@v1.14.2", "bootstrap", "kubeadm", "config", "crd", "bases",
		"bootstrap.cluster.x-k8s.io_kubeadmconfigs.yaml")
}

func loadCRDValidator() (*crdValidator, error) {
	crdOnce.Do(func() {
		raw, err := os.ReadFile(crdPath())
		if err != nil {
			crdErr = err
			return
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			crdErr = err
			return
		}
		for _, v := range crd.Spec.Versions {
			if v.Name != bootstrapv1.GroupVersion.Version {
				continue
			}
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				crdErr = err
				return
			}
			sv, _, err := validation.NewSchemaValidator(internal)
			if err != nil {
				crdErr = err
				return
			}
			st, err := structuralschema.NewStructural(internal)
			if err != nil {
				crdErr = err
				return
			}
			crdVal = &crdValidator{schema: sv, structural: st, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}
			return
		}
		crdErr = fmt.Errorf("no %s version in %s", bootstrapv1.GroupVersion.Version, crdPath())
	})
	return crdVal, crdErr
}

// validate returns what the API server would refuse in c: its CRD schema
// and CEL rules. Like the API server it sees c as JSON, so omitted
// optionals are absent and empty list items are present.
func (v *crdValidator) validate(c *bootstrapv1.KubeadmConfig) field.ErrorList {
	c = c.DeepCopy()
	c.APIVersion, c.Kind = bootstrapv1.GroupVersion.String(), "KubeadmConfig"
	raw, err := json.Marshal(c)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	// The API server prunes unknown fields and applies defaults first.
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, v.structural)
	errs := validation.ValidateCustomResource(nil, obj, v.schema)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}
