package manifest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// Input assembles the bootstrap.Input for the KubeadmConfig called name, or
// for the only KubeadmConfig when name is empty. Its owner is found through
// its ownerReferences (or, failing that, a Machine or MachinePool whose
// bootstrap configRef names it), the Cluster through the owner's clusterName.
func (s *Set) Input(name string) (*bootstrap.Input, error) {
	cfg, err := s.config(name)
	if err != nil {
		return nil, err
	}
	ns := namespaceOrDefault(cfg.Namespace)
	cfg.Namespace = ns
	in := &bootstrap.Input{Config: cfg, Secrets: s.Secrets}
	ref := "KubeadmConfig " + ns + "/" + cfg.Name
	clusterName := ""
	for _, m := range s.Machines {
		if namespaceOrDefault(m.Namespace) == ns && (ownedBy(cfg, "Machine", m.Name) || m.Spec.Bootstrap.ConfigRef.Name == cfg.Name) {
			m.Namespace = ns
			in.Machine, clusterName = m, m.Spec.ClusterName
			break
		}
	}
	if in.Machine == nil {
		for _, mp := range s.MachinePools {
			if namespaceOrDefault(mp.Namespace) == ns && (ownedBy(cfg, "MachinePool", mp.Name) || mp.Spec.Template.Spec.Bootstrap.ConfigRef.Name == cfg.Name) {
				mp.Namespace = ns
				in.MachinePool, clusterName = mp, mp.Spec.ClusterName
				break
			}
		}
	}
	if in.Machine == nil && in.MachinePool == nil {
		return nil, fmt.Errorf("%s: metadata.ownerReferences: no Machine or MachinePool in the input owns it", ref)
	}
	if clusterName == "" {
		clusterName = cfg.Labels[clusterv1.ClusterNameLabel]
	}
	for _, c := range s.Clusters {
		if namespaceOrDefault(c.Namespace) == ns && c.Name == clusterName {
			c.Namespace = ns
			in.Cluster = c
		}
	}
	if in.Cluster == nil {
		return nil, fmt.Errorf("%s: Cluster %s/%s is not in the input", ref, ns, clusterName)
	}
	if tmpl := cfg.Annotations[clusterv1.TemplateClonedFromNameAnnotation]; tmpl != "" {
		for _, t := range s.Templates {
			if namespaceOrDefault(t.Namespace) == ns && t.Name == tmpl {
				in.Template = t
			}
		}
	}
	if cp := in.Cluster.Spec.ControlPlaneRef; cp.IsDefined() {
		for _, o := range s.ControlPlanes {
			if namespaceOrDefault(o.GetNamespace()) == ns && o.GetName() == cp.Name && o.GetKind() == cp.Kind {
				v, _, err := unstructured.NestedString(o.Object, "spec", "version")
				if err != nil {
					return nil, fmt.Errorf("%s %s/%s: spec.version: %w", cp.Kind, ns, cp.Name, err)
				}
				in.ControlPlaneVersion = v
			}
		}
	}
	return in, nil
}

func (s *Set) config(name string) (*bootstrapv1.KubeadmConfig, error) {
	switch {
	case name != "":
		for _, c := range s.Configs {
			if c.Name == name {
				return c, nil
			}
		}
		return nil, fmt.Errorf("no KubeadmConfig named %q in the input", name)
	case len(s.Configs) == 1:
		return s.Configs[0], nil
	case len(s.Configs) == 0:
		return nil, fmt.Errorf("the input has no KubeadmConfig")
	}
	return nil, fmt.Errorf("the input has %d KubeadmConfigs; choose one with --name", len(s.Configs))
}

func ownedBy(cfg *bootstrapv1.KubeadmConfig, kind, name string) bool {
	for _, o := range cfg.OwnerReferences {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}
