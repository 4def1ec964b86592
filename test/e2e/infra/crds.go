// Package infra is the e2e test's infrastructure provider: it plays the
// cloud for Cluster API the way the Docker provider (CAPD) does in Cluster
// API's own end-to-end tests. An E2ECluster is provisioned at once with the
// control-plane endpoint the test chose; for each E2EMachine it waits for
// the Machine's bootstrap data Secret, boots a node container from it (lab),
// and reports the provider ID and the address, then sets the Node's
// providerID in the workload cluster as CAPD does, so Cluster API links the
// Machine to its Node.
package infra

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Group and version of the provider's kinds.
const (
	Group   = "infrastructure.e2e.nodeboot.dev"
	Version = "v1alpha1"
)

// Kinds.
const (
	ClusterKind = "E2ECluster"
	MachineKind = "E2EMachine"
)

// ClusterGVK and MachineGVK are the provider's kinds.
var (
	ClusterGVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: ClusterKind}
	MachineGVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: MachineKind}
)

// CRDs are the provider's CustomResourceDefinitions, labelled with the
// Cluster API contract version they implement (v1beta2), as clusterctl
// requires of a provider.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{crd(ClusterKind, "e2eclusters"), crd(MachineKind, "e2emachines")}
}

func crd(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	open := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   plural + "." + Group,
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": Version, "cluster.x-k8s.io/provider": "infrastructure-e2e"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: lower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": open, "status": open},
				}},
			}},
		},
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
