package crdvalidate

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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

// ErrUnknownKind: no embedded CRD for the kind.
var ErrUnknownKind = errors.New("no CRD for this kind")

//go:embed crds/*.json.gz
var crds embed.FS

// Files maps each kind to its CRD file in Cluster API's
// bootstrap/kubeadm/config/crd/bases. Embedded is only the v1beta2 schema
// of each, as gzipped JSON: parsing the whole CRD's YAML took more than half
// of the validator's start-up.
var Files = map[string]string{
	"KubeadmConfig":         "bootstrap.cluster.x-k8s.io_kubeadmconfigs.yaml",
	"KubeadmConfigTemplate": "bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml",
}

// EmbeddedName is the embedded file holding the schema of kind's CRD file.
func EmbeddedName(file string) string {
	return "crds/" + strings.TrimSuffix(file, ".yaml") + "." + bootstrapv1.GroupVersion.Version + ".json.gz"
}

// Validator checks objects of one kind against its CRD's v1beta2 schema.
type Validator struct {
	schema     validation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

type lazy struct {
	once sync.Once
	v    *Validator
	err  error
}

var validators = map[string]*lazy{"KubeadmConfig": {}, "KubeadmConfigTemplate": {}}

// For returns the validator of kind, compiling its schema on first use.
func For(kind string) (*Validator, error) {
	l, ok := validators[kind]
	if !ok {
		return nil, fmt.Errorf("%s: %w", kind, ErrUnknownKind)
	}
	l.once.Do(func() { l.v, l.err = load(kind) })
	return l.v, l.err
}

// Schema returns the embedded v1beta2 OpenAPI schema of kind's CRD.
func Schema(kind string) (*apiextensionsv1.JSONSchemaProps, error) {
	file, ok := Files[kind]
	if !ok {
		return nil, fmt.Errorf("%s: %w", kind, ErrUnknownKind)
	}
	f, err := crds.Open(EmbeddedName(file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 16<<20))
	if err != nil {
		return nil, err
	}
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(raw, props); err != nil {
		return nil, fmt.Errorf("%s: %w", EmbeddedName(file), err)
	}
	return props, nil
}

// SchemaFromCRD extracts the v1beta2 schema from a CRD's YAML, as the
// embedded files were made.
func SchemaFromCRD(raw []byte) (*apiextensionsv1.JSONSchemaProps, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == bootstrapv1.GroupVersion.Version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema, nil
		}
	}
	return nil, fmt.Errorf("%s: no %s version", crd.Name, bootstrapv1.GroupVersion.Version)
}

func load(kind string) (*Validator, error) {
	props, err := Schema(kind)
	if err != nil {
		return nil, err
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, err
	}
	sv, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	st, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	return &Validator{schema: sv, structural: st, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}, nil
}

// Validate returns what the API server would refuse in obj, an object as
// JSON decodes it (map[string]any). Like the API server it drops nulls
// without defaults and applies the schema's defaults first; obj is changed.
// Status is not validated: a create or apply ignores it.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	delete(obj, "status")
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, v.structural)
	structuraldefaulting.Default(obj, v.structural)
	errs := validation.ValidateCustomResource(nil, obj, v.schema)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// ValidateObject validates a typed object as it would be sent: marshalled to
// JSON, so omitted optionals are absent and empty list items present.
func (v *Validator) ValidateObject(o any) field.ErrorList {
	raw, err := json.Marshal(o)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return v.Validate(obj)
}

// Messages renders errs one line each as "path: what is wrong", without the
// offending value: field.Error's own text quotes it, and it may be a token
// or a password.
func Messages(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.Field + ": " + e.Type.String()
		detail := strings.TrimPrefix(e.Detail, e.Field+" in body ")
		if d := redact(detail, e.BadValue); d != "" {
			msg += ": " + d
		}
		out = append(out, msg)
	}
	return out
}

// redact removes a string value a detail might repeat (a CEL message or an
// OpenAPI type error can).
func redact(detail string, bad any) string {
	if s, ok := bad.(string); ok && len(s) >= 3 {
		detail = strings.ReplaceAll(detail, s, "<value>")
	}
	if len(detail) > 200 {
		detail = detail[:200] + "…"
	}
	return detail
}

// Compact is Messages joined by "; ", for one-line errors.
func Compact(errs field.ErrorList) string {
	var b bytes.Buffer
	for i, m := range Messages(errs) {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m)
	}
	return b.String()
}
