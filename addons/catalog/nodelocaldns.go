package catalog

import "net/netip"

// nodeLocalDNS are the values of the NodeLocal DNSCache template.
type nodeLocalDNS struct {
	ClusterDomain string
	LocalIP       string
	// LocalIPs is node-cache's -localip list: the link-local address, plus
	// the kube-dns address it also intercepts in iptables mode.
	LocalIPs string
	// Bind is the Corefile bind list, the same addresses space-separated.
	Bind string
	// Health is the health plugin's listen address (an IPv6 address in
	// brackets).
	Health string
	// ClusterDNS is where cluster-domain queries go: in iptables mode the
	// __PILLAR__CLUSTER__DNS__ marker node-cache fills with the
	// kube-dns-upstream Service address at runtime; in IPVS mode kube-dns
	// itself, which node-cache cannot intercept there.
	ClusterDNS string
}

func nodeLocalDNSValues(p Params) (any, error) {
	domain, err := clusterDomain(p.ClusterDomain)
	if err != nil {
		return nil, err
	}
	dns, err := kubeDNSIP(p)
	if err != nil {
		return nil, err
	}
	local := p.LocalIP
	if local == "" {
		local = DefaultLocalIP
		if dns.Is6() {
			local = DefaultLocalIPv6
		}
	}
	localIP, err := parseIP("localIP", local)
	if err != nil {
		return nil, err
	}
	switch {
	case localIP.Is4() && !localIP.IsLinkLocalUnicast():
		return nil, &ParamError{Field: "localIP", Value: local, Detail: "must be a link-local address such as 169.254.20.10"}
	case localIP.Is6() && !uniqueLocal.Contains(localIP):
		// Not link-local: without a zone, which resolv.conf cannot give,
		// an IPv6 link-local nameserver is unreachable from pods.
		return nil, &ParamError{Field: "localIP", Value: local, Detail: "must be a unique local address such as fd00::10"}
	case localIP.Is4() != dns.Is4():
		// The kubelets and pods of one family cannot reach a cache of the
		// other: the kube-dns address decides (the first service CIDR).
		return nil, &ParamError{Field: "localIP", Value: local, Detail: "must be of the kube-dns address's family (" + dns.String() + ")"}
	}
	v := nodeLocalDNS{ClusterDomain: domain, LocalIP: localIP.String(), Health: netip.AddrPortFrom(localIP, 8080).String()}
	switch p.KubeProxyMode {
	case "", "iptables":
		v.LocalIPs = v.LocalIP + "," + dns.String()
		v.Bind = v.LocalIP + " " + dns.String()
		v.ClusterDNS = "__PILLAR__CLUSTER__DNS__"
	case "ipvs":
		v.LocalIPs, v.Bind, v.ClusterDNS = v.LocalIP, v.LocalIP, dns.String()
	default:
		return nil, &ParamError{Field: "kubeProxyMode", Value: p.KubeProxyMode, Detail: "must be iptables or ipvs"}
	}
	return v, nil
}

// KubeletClusterDNS is the clusterDNS every kubelet needs for NodeLocal
// DNSCache with these parameters, or "" when the kubelets keep kube-dns
// (iptables mode, where node-cache intercepts the kube-dns address itself).
func KubeletClusterDNS(p Params) (string, error) {
	v, err := nodeLocalDNSValues(p)
	if err != nil || p.KubeProxyMode != "ipvs" {
		return "", err
	}
	return v.(nodeLocalDNS).LocalIP, nil
}

// uniqueLocal is IPv6's fd00::/8 (RFC 4193, locally assigned).
var uniqueLocal = netip.MustParsePrefix("fd00::/8")
