package tmp

import (
	_ "github.com/coreos/butane/config"
	_ "github.com/coreos/ignition/v2/config/v3_5/types"
	_ "github.com/stretchr/testify/require"
	_ "gopkg.in/yaml.v3"
	_ "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types"
	_ "sigs.k8s.io/cluster-api/util/secret"
	_ "sigs.k8s.io/controller-runtime"
)
