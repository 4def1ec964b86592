package catalog

// flannel are the values of the Flannel template.
type flannel struct {
	PodCIDR string
	VNI     int32
	Port    int32
}

func flannelValues(p Params) (any, error) {
	if p.PodCIDR == "" {
		return nil, &ParamError{Field: "podCIDR", Detail: "Flannel needs the cluster's pod network; set the Cluster's spec.clusterNetwork.pods.cidrBlocks"}
	}
	pods, err := parsePrefix("podCIDR", p.PodCIDR)
	if err != nil {
		return nil, err
	}
	if !pods.Addr().Is4() {
		return nil, &ParamError{Field: "podCIDR", Value: p.PodCIDR, Detail: "the flannel built-in supports IPv4 pod networks only"}
	}
	vni, err := inRange("vni", p.VNI, DefaultVNI, 1, 1<<24-1)
	if err != nil {
		return nil, err
	}
	port, err := inRange("port", p.Port, DefaultPort, 1, 65535)
	if err != nil {
		return nil, err
	}
	return flannel{PodCIDR: pods.String(), VNI: vni, Port: port}, nil
}
