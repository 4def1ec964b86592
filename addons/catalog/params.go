package catalog

import (
	"net/netip"
	"regexp"
	"strconv"
)

// Params are the inputs of every built-in. Cluster-derived fields come from the
// Cluster object; the others from the add-on's own parameters. Empty fields
// take the documented defaults.
type Params struct {
	// PodCIDR is the cluster's first pod network (Flannel's network).
	PodCIDR string `json:"podCIDR,omitempty"`
	// ServiceCIDR is the cluster's first service network; default 10.96.0.0/12
	// (kubeadm's default).
	ServiceCIDR string `json:"serviceCIDR,omitempty"`
	// ClusterDomain is the cluster DNS domain; default cluster.local.
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// LocalIP is NodeLocal DNSCache's link-local address; default 169.254.20.10.
	LocalIP string `json:"localIP,omitempty"`
	// KubeDNSIP is the kube-dns Service address; default the 10th address of
	// ServiceCIDR, as kubeadm assigns it.
	KubeDNSIP string `json:"kubeDNSIP,omitempty"`
	// KubeProxyMode is "iptables" (default) or "ipvs".
	KubeProxyMode string `json:"kubeProxyMode,omitempty"`

	// VNI is Flannel's VXLAN network identifier; default 1.
	VNI int32 `json:"vni,omitempty"`
	// Port is Flannel's VXLAN UDP port; default 8472.
	Port int32 `json:"port,omitempty"`

	// ImageRepository, when set, replaces the registry and path of every
	// image the add-on runs and keeps the image's name and tag, as kubeadm's
	// imageRepository does for the control plane: with "mirror.example/k8s",
	// flannel-io/flannel:v0.28.4 from its upstream registry becomes
	// mirror.example/k8s/flannel:v0.28.4. For clusters that pull from a
	// mirror of their own.
	ImageRepository string `json:"imageRepository,omitempty"`
}

// Defaults.
const (
	DefaultLocalIP = "169.254.20.10"
	// DefaultLocalIPv6 is NodeLocal DNSCache's address where the kube-dns
	// address is IPv6: the unique local address Kubernetes' guide uses.
	DefaultLocalIPv6     = "fd00::10"
	DefaultServiceCIDR   = "10.96.0.0/12"
	DefaultClusterDomain = "cluster.local"
	DefaultKubeProxyMode = "iptables"
	DefaultVNI           = 1
	DefaultPort          = 8472
)

// imageRepository is a registry host (with an optional port) and path, as
// an image reference spells them before the image's name: lower case,
// no tag, no digest, no scheme.
var imageRepository = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)

// MaxImageRepositoryLength bounds ImageRepository (a reference is at most
// 255 characters before its name).
const MaxImageRepositoryLength = 255

func checkImageRepository(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > MaxImageRepositoryLength || !imageRepository.MatchString(v) {
		return &ParamError{Field: "imageRepository", Value: v, Detail: "must be a registry and path such as mirror.example/k8s: lower case, no scheme, tag or digest"}
	}
	return nil
}

var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$`)

func parseIP(field, v string) (netip.Addr, error) {
	a, err := netip.ParseAddr(v)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, &ParamError{Field: field, Value: v, Detail: "must be an IP address"}
	}
	return a, nil
}

func parsePrefix(field, v string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		return netip.Prefix{}, &ParamError{Field: field, Value: v, Detail: "must be a CIDR such as 10.244.0.0/16"}
	}
	if p.Masked() != p {
		return netip.Prefix{}, &ParamError{Field: field, Value: v, Detail: "has host bits set; did you mean " + p.Masked().String() + "?"}
	}
	return p, nil
}

func clusterDomain(v string) (string, error) {
	if v == "" {
		return DefaultClusterDomain, nil
	}
	if len(v) > 253 || !dnsName.MatchString(v) {
		return "", &ParamError{Field: "clusterDomain", Value: v, Detail: "must be a lower-case DNS name"}
	}
	return v, nil
}

// NthAddress returns the n-th address of a prefix (the network address is the
// 0th), as kubeadm picks the cluster DNS address: the 10th of the service CIDR.
func NthAddress(p netip.Prefix, n int) (netip.Addr, bool) {
	a := p.Masked().Addr()
	for range n {
		a = a.Next()
		if !a.IsValid() || !p.Contains(a) {
			return netip.Addr{}, false
		}
	}
	return a, true
}

func kubeDNSIP(p Params) (netip.Addr, error) {
	if p.KubeDNSIP != "" {
		return parseIP("kubeDNSIP", p.KubeDNSIP)
	}
	cidr := p.ServiceCIDR
	if cidr == "" {
		cidr = DefaultServiceCIDR
	}
	svc, err := parsePrefix("serviceCIDR", cidr)
	if err != nil {
		return netip.Addr{}, err
	}
	a, ok := NthAddress(svc, 10)
	if !ok {
		return netip.Addr{}, &ParamError{Field: "serviceCIDR", Value: cidr, Detail: "is too small to hold the kube-dns address (its 10th address)"}
	}
	return a, nil
}

func inRange(field string, v, def, lo, hi int32) (int32, error) {
	if v == 0 {
		return def, nil
	}
	if v < lo || v > hi {
		return 0, &ParamError{Field: field, Value: strconv.Itoa(int(v)), Detail: "must be between " + strconv.Itoa(int(lo)) + " and " + strconv.Itoa(int(hi))}
	}
	return v, nil
}
