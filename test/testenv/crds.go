package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// CAPICRDs are the CRDs of Cluster API core, the kubeadm bootstrap and
// control-plane providers from the pinned cluster-api module, with the
// contract labels their kustomizations add, for envtest.
func CAPICRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api").Output()
	if err != nil {
		return nil, fmt.Errorf("locate the cluster-api module: %w", err)
	}
	root := strings.TrimSpace(string(out))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range []string{"core/config/crd/bases", "bootstrap/kubeadm/config/crd/bases", "controlplane/kubeadm/config/crd/bases"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("no CRDs in %s", dir)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(raw, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			crd.Labels = map[string]string{"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}
			crds = append(crds, crd)
		}
	}
	return crds, nil
}
