package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FirstBootAddon is a set of Kubernetes manifests nodeboot writes onto the
// first control-plane node of every Cluster it selects and applies once, right
// after kubeadm init, with server-side apply under the field manager
// "nodeboot". Like a ClusterResourceSet it selects Clusters in its own
// namespace by label; unlike one it needs no running management-cluster
// connection to deliver: the node applies the manifests itself.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=firstbootaddons,scope=Namespaced,categories=cluster-api,shortName=fba
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=".status.source"
// +kubebuilder:printcolumn:name="Order",type=integer,JSONPath=".spec.order"
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="SourceValid")].status`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type FirstBootAddon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired add-on.
	// +required
	Spec FirstBootAddonSpec `json:"spec"`
	// status is what the controller observed.
	// +optional
	Status FirstBootAddonStatus `json:"status,omitempty"`
}

// FirstBootAddonSpec selects Clusters and names exactly one source of manifests.
//
// +kubebuilder:validation:XValidation:rule="[has(self.builtin), has(self.manifests), has(self.url)].exists_one(x, x)",message="exactly one of builtin, manifests and url must be set"
type FirstBootAddonSpec struct {
	// clusterSelector selects the Clusters in this namespace that get the
	// add-on, by their labels. An empty selector selects no Cluster, as for
	// a ClusterResourceSet.
	// +required
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`

	// builtin is one of nodeboot's own add-ons, parameterised from the Cluster.
	// +optional
	Builtin *BuiltinSource `json:"builtin,omitempty"`

	// manifests come from a ConfigMap or Secret in this namespace: every data
	// key holds one or more YAML documents, as for a ClusterResourceSet.
	// +optional
	Manifests *ManifestsSource `json:"manifests,omitempty"`

	// url is fetched by the node itself and applied only when its sha256
	// matches. Use it for add-ons too large to inline into bootstrap data.
	// +optional
	URL *URLSource `json:"url,omitempty"`

	// order sorts add-ons on a node: lower first, equal orders by name.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=999
	// +optional
	Order int32 `json:"order,omitempty"`
}

// Names of the built-in add-ons.
const (
	// BuiltinNodeLocalDNS is NodeLocal DNSCache.
	BuiltinNodeLocalDNS = "nodelocaldns"
	// BuiltinFlannel is the Flannel CNI with its VXLAN backend.
	BuiltinFlannel = "flannel"
)

// BuiltinSource names a built-in add-on and its parameters.
//
// +kubebuilder:validation:XValidation:rule="!has(self.nodeLocalDNS) || self.name == 'nodelocaldns'",message="nodeLocalDNS parameters apply only to the nodelocaldns add-on",fieldPath=".nodeLocalDNS"
// +kubebuilder:validation:XValidation:rule="!has(self.flannel) || self.name == 'flannel'",message="flannel parameters apply only to the flannel add-on",fieldPath=".flannel"
type BuiltinSource struct {
	// name of the built-in add-on: nodelocaldns or flannel.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// version of the add-on; empty means the newest the controller ships.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Version string `json:"version,omitempty"`

	// nodeLocalDNS parameters, for name: nodelocaldns.
	// +optional
	NodeLocalDNS *NodeLocalDNSParameters `json:"nodeLocalDNS,omitempty"`

	// flannel parameters, for name: flannel.
	// +optional
	Flannel *FlannelParameters `json:"flannel,omitempty"`

	// imageRepository, when set, is where the add-on's images are pulled
	// from instead of their upstream registries: each image keeps its name
	// and tag under this repository, as kubeadm's imageRepository does for
	// the control plane (mirror.example/k8s gives
	// mirror.example/k8s/flannel:v0.28.4). For clusters that pull from a
	// mirror of their own.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*$`
	// +optional
	ImageRepository string `json:"imageRepository,omitempty"`
}

// KubeProxyMode is the proxy mode kube-proxy runs in.
// +kubebuilder:validation:Enum=iptables;ipvs
type KubeProxyMode string

const (
	// KubeProxyIPTables is kube-proxy's iptables mode, the default.
	KubeProxyIPTables KubeProxyMode = "iptables"
	// KubeProxyIPVS is kube-proxy's IPVS mode. NodeLocal DNSCache then needs
	// every kubelet's clusterDNS set to its link-local address.
	KubeProxyIPVS KubeProxyMode = "ipvs"
)

// NodeLocalDNSParameters tune NodeLocal DNSCache. Empty fields are derived from
// the Cluster.
type NodeLocalDNSParameters struct {
	// localIP is the address the cache listens on: IPv4 link-local, or IPv6
	// unique local, of the kube-dns address's family. Default 169.254.20.10,
	// or fd00::10 where the first service CIDR is IPv6.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	// +kubebuilder:validation:MaxLength=45
	// +optional
	LocalIP string `json:"localIP,omitempty"`

	// kubeDNSIP is the kube-dns Service address. Default: the 10th address of
	// the Cluster's first service CIDR (kubeadm's choice), 10.96.0.10 without one.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	// +kubebuilder:validation:MaxLength=45
	// +optional
	KubeDNSIP string `json:"kubeDNSIP,omitempty"`

	// clusterDomain is the cluster's DNS domain. Default: the Cluster's
	// spec.clusterNetwork.serviceDomain, else cluster.local.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// kubeProxyMode is the mode of the cluster's kube-proxy. Default iptables.
	// +optional
	KubeProxyMode KubeProxyMode `json:"kubeProxyMode,omitempty"`
}

// FlannelParameters tune Flannel's VXLAN backend. The pod network is the
// Cluster's spec.clusterNetwork.pods.cidrBlocks[0].
type FlannelParameters struct {
	// vni is the VXLAN network identifier. Default 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777215
	// +optional
	VNI *int32 `json:"vni,omitempty"`

	// port is the VXLAN UDP port. Default: the kernel's, 8472.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port *int32 `json:"port,omitempty"`
}

// ManifestKind is the kind of object holding manifests.
// +kubebuilder:validation:Enum=ConfigMap;Secret
type ManifestKind string

const (
	// ManifestsConfigMap reads manifests from a ConfigMap's data.
	ManifestsConfigMap ManifestKind = "ConfigMap"
	// ManifestsSecret reads manifests from a Secret's data.
	ManifestsSecret ManifestKind = "Secret"
)

// ManifestsSource is a ConfigMap or Secret in the add-on's namespace.
type ManifestsSource struct {
	// kind is ConfigMap or Secret.
	// +required
	Kind ManifestKind `json:"kind"`
	// name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// URLSource is a manifest fetched by the node.
type URLSource struct {
	// url of the manifest, http or https.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('https://') || self.startsWith('http://'))",message="must be an http or https URL"
	// +required
	URL string `json:"url"`
	// sha256 is the hex digest of the manifest; the node refuses anything else.
	// +kubebuilder:validation:Pattern=`^[a-f0-9]{64}$`
	// +required
	SHA256 string `json:"sha256"`
	// version is recorded with the result on the workload cluster.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Version string `json:"version,omitempty"`
}

// FirstBootAddonStatus is what the controller observed.
type FirstBootAddonStatus struct {
	// conditions: SourceValid and Applied.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// source summarises the source, e.g. "builtin flannel v0.28.4".
	// +optional
	Source string `json:"source,omitempty"`

	// version that will be delivered.
	// +optional
	Version string `json:"version,omitempty"`

	// digest is "sha256:<hex>" of what will be delivered: the manifests of a
	// ConfigMap or Secret, the declared digest of a URL, or a built-in's
	// template. Built-ins render per Cluster; clusters[].digest has each.
	// +optional
	Digest string `json:"digest,omitempty"`

	// clusters reports the add-on on each selected Cluster.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Clusters []ClusterAddonStatus `json:"clusters,omitempty"`
}

// AddonPhase is how far an add-on got on one Cluster.
type AddonPhase string

const (
	// AddonPending: the workload cluster has no record of the add-on yet.
	AddonPending AddonPhase = "Pending"
	// AddonApplied: the first control-plane node applied the add-on.
	AddonApplied AddonPhase = "Applied"
	// AddonFailed: the node recorded a failure (digest mismatch, apply error).
	AddonFailed AddonPhase = "Failed"
	// AddonUnknown: the workload cluster could not be read.
	AddonUnknown AddonPhase = "Unknown"
)

// ClusterAddonStatus is the add-on on one Cluster.
type ClusterAddonStatus struct {
	// name of the Cluster.
	// +required
	Name string `json:"name"`
	// phase is Pending, Applied, Failed or Unknown.
	// +optional
	Phase AddonPhase `json:"phase,omitempty"`
	// digest is "sha256:<hex>" of what this Cluster's node gets.
	// +optional
	Digest string `json:"digest,omitempty"`
	// appliedDigest is what the node recorded as applied.
	// +optional
	AppliedDigest string `json:"appliedDigest,omitempty"`
	// message explains a failure.
	// +optional
	Message string `json:"message,omitempty"`
}

// FirstBootAddonList is a list of FirstBootAddons.
//
// +kubebuilder:object:root=true
type FirstBootAddonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FirstBootAddon `json:"items"`
}
