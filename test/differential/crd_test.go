package differential

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/internal/crdvalidate"
)

// The API server validates a KubeadmConfig against its CRD's OpenAPI schema
// (MinLength, MaxLength, Enum, Minimum/Maximum, MinProperties, ...) and its
// CEL rules (partitionType, exactly one of layout/diskLayout, unique
// extraArgs names) before CABPK's webhook sees it. crdValidator is the CLI's
// validator (internal/crdvalidate, Cluster API v1.14.2's own CRD), so the
// generators drop exactly what a real cluster, and `nodeboot render`, refuse.
type crdValidator struct{ v *crdvalidate.Validator }

func loadCRDValidator() (*crdValidator, error) {
	v, err := crdvalidate.For("KubeadmConfig")
	if err != nil {
		return nil, err
	}
	return &crdValidator{v: v}, nil
}

// validate returns what the API server would refuse in c. Like the API
// server it sees c as JSON, so omitted optionals are absent and empty list
// items are present.
func (v *crdValidator) validate(c *bootstrapv1.KubeadmConfig) field.ErrorList {
	c = c.DeepCopy()
	c.APIVersion, c.Kind = bootstrapv1.GroupVersion.String(), "KubeadmConfig"
	return v.v.ValidateObject(c)
}
