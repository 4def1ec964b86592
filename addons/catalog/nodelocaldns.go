package catalog

// nodeLocalDNS are the values of the NodeLocal DNSCache template.
type nodeLocalDNS struct {
	ClusterDomain string
	LocalIP       string
	// LocalIPs is node-cache's -localip list: the link-local address, plus
	// the kube-dns address it also intercepts in iptables mode.
	LocalIPs string
	// Bind is the Corefile bind list, the same addresses space-separated.
	Bind string
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
	local := p.LocalIP
	if local == "" {
		local = DefaultLocalIP
	}
	localIP, err := parseIP("localIP", local)
	if err != nil {
		return nil, err
	}
	if !localIP.IsLinkLocalUnicast() {
		return nil, &ParamError{Field: "localIP", Value: local, Detail: "must be a link-local address such as 169.254.20.10"}
	}
	dns, err := kubeDNSIP(p)
	if err != nil {
		return nil, err
	}
	v := nodeLocalDNS{ClusterDomain: domain, LocalIP: localIP.String()}
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
	if _, err := nodeLocalDNSValues(p); err != nil {
		return "", err
	}
	if p.KubeProxyMode != "ipvs" {
		return "", nil
	}
	if p.LocalIP == "" {
		return DefaultLocalIP, nil
	}
	return p.LocalIP, nil
}
