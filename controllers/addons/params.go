package addons

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/addons/catalog"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
)

// builtinParams merges what the Cluster says (pod and service networks, DNS
// domain) with the add-on's own parameters, the add-on's winning.
func builtinParams(b *addonsv1.BuiltinSource, cluster *clusterv1.Cluster) catalog.Params {
	var p catalog.Params
	if cluster != nil {
		n := &cluster.Spec.ClusterNetwork
		if len(n.Pods.CIDRBlocks) > 0 {
			p.PodCIDR = n.Pods.CIDRBlocks[0]
		}
		if len(n.Services.CIDRBlocks) > 0 {
			p.ServiceCIDR = n.Services.CIDRBlocks[0]
		}
		p.ClusterDomain = n.ServiceDomain
	}
	if d := b.NodeLocalDNS; d != nil {
		if d.LocalIP != "" {
			p.LocalIP = d.LocalIP
		}
		if d.KubeDNSIP != "" {
			p.KubeDNSIP = d.KubeDNSIP
		}
		if d.ClusterDomain != "" {
			p.ClusterDomain = d.ClusterDomain
		}
		p.KubeProxyMode = string(d.KubeProxyMode)
	}
	if f := b.Flannel; f != nil {
		p.VNI = ptr.Deref(f.VNI, 0)
		p.Port = ptr.Deref(f.Port, 0)
	}
	p.ImageRepository = b.ImageRepository
	return p
}

// validateBuiltinParams checks the add-on's own parameters against a Cluster
// with a typical network, so that only the add-on's fields can be at fault.
func validateBuiltinParams(b *addonsv1.BuiltinSource) error {
	typical := &clusterv1.Cluster{}
	typical.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"10.244.0.0/16"}
	_, err := catalog.Render(b.Name, b.Version, builtinParams(b, typical))
	return err
}

// paramError maps a catalog error to the field it came from: the add-on's
// parameter when the add-on set it, else the Cluster's network field.
func paramError(b *addonsv1.BuiltinSource, cluster *clusterv1.Cluster, err error) *field.Error {
	bp := specPath.Child("builtin")
	var pe *catalog.ParamError
	if !errors.As(err, &pe) {
		return field.Invalid(bp, b.Name, err.Error())
	}
	fromCluster := func(clusterField string) *field.Error {
		ref := "the Cluster"
		if cluster != nil {
			ref = "Cluster " + cluster.Namespace + "/" + cluster.Name
		}
		return field.Invalid(bp, b.Name, fmt.Sprintf("%s %s: %s", ref, clusterField, pe.Detail+valueSuffix(pe.Value)))
	}
	nl := bp.Child("nodeLocalDNS")
	switch pe.Field {
	case "localIP":
		return field.Invalid(nl.Child("localIP"), pe.Value, pe.Detail)
	case "kubeDNSIP":
		return field.Invalid(nl.Child("kubeDNSIP"), pe.Value, pe.Detail)
	case "kubeProxyMode":
		return field.Invalid(nl.Child("kubeProxyMode"), pe.Value, pe.Detail)
	case "clusterDomain":
		if b.NodeLocalDNS != nil && b.NodeLocalDNS.ClusterDomain != "" {
			return field.Invalid(nl.Child("clusterDomain"), pe.Value, pe.Detail)
		}
		return fromCluster("spec.clusterNetwork.serviceDomain")
	case "serviceCIDR":
		return fromCluster("spec.clusterNetwork.services.cidrBlocks[0]")
	case "podCIDR":
		return fromCluster("spec.clusterNetwork.pods.cidrBlocks[0]")
	case "vni", "port":
		return field.Invalid(bp.Child("flannel", pe.Field), pe.Value, pe.Detail)
	case "imageRepository":
		return field.Invalid(bp.Child("imageRepository"), pe.Value, pe.Detail)
	}
	return field.Invalid(bp, b.Name, pe.Error())
}

func valueSuffix(v string) string {
	if v == "" {
		return ""
	}
	return fmt.Sprintf(" (got %q)", v)
}
