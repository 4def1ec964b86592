package bootstrap

import (
	"context"
	"fmt"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// SecretGetter returns the data of a Secret. It returns an error wrapping
// ErrSecretNotFound when the Secret does not exist.
type SecretGetter interface {
	SecretData(ctx context.Context, namespace, name string) (map[string][]byte, error)
}

// SecretMap is a SecretGetter over a map keyed by "namespace/name".
type SecretMap map[string]map[string][]byte

// SecretData implements SecretGetter.
func (m SecretMap) SecretData(_ context.Context, namespace, name string) (map[string][]byte, error) {
	if d, ok := m[namespace+"/"+name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: %s/%s", ErrSecretNotFound, namespace, name)
}

// Input is everything Build needs. Exactly one of Machine and MachinePool is set.
type Input struct {
	Config      *bootstrapv1.KubeadmConfig
	Cluster     *clusterv1.Cluster
	Machine     *clusterv1.Machine
	MachinePool *clusterv1.MachinePool
	// Template is the KubeadmConfigTemplate the Config was cloned from, if
	// known; its annotations count as the Config's for nodeboot's opt-ins.
	Template *bootstrapv1.KubeadmConfigTemplate
	// Secrets resolves certificate Secrets and contentFrom/passwdFrom.
	Secrets SecretGetter
	// ControlPlaneVersion is spec.version of the Cluster's control-plane object
	// (e.g. a KubeadmControlPlane), "" when it has none. It feeds
	// {{ .controlPlane.version }} in files with contentFormat: Template.
	ControlPlaneVersion string
	// GenerateMissingCertificates makes an init build generate cluster CAs that
	// have no Secret, as CABPK does when the Cluster has no controlPlaneRef.
	// Generated ones are returned in Result.Certificates for the caller to save.
	GenerateMissingCertificates bool
	// Strict turns every render warning into an error, for configs without
	// the nodeboot.dev/strict annotation (which decides where it is set).
	Strict bool
}

func (in *Input) configRef() ObjectRef {
	return ObjectRef{Kind: "KubeadmConfig", Namespace: in.Config.Namespace, Name: in.Config.Name}
}

func (in *Input) ownerRef() ObjectRef {
	if in.MachinePool != nil {
		return ObjectRef{Kind: "MachinePool", Namespace: in.MachinePool.Namespace, Name: in.MachinePool.Name}
	}
	if in.Machine != nil {
		return ObjectRef{Kind: "Machine", Namespace: in.Machine.Namespace, Name: in.Machine.Name}
	}
	return ObjectRef{Kind: "owner"}
}

func (in *Input) version() string {
	if in.MachinePool != nil {
		return in.MachinePool.Spec.Template.Spec.Version
	}
	if in.Machine != nil {
		return in.Machine.Spec.Version
	}
	return ""
}

func (in *Input) isControlPlaneMachine() bool {
	if in.Machine == nil {
		return false
	}
	_, ok := in.Machine.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}
