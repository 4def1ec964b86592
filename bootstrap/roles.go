package bootstrap

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	kubeadmtypes "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstream"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/nodeboot/nodeboot/provisioning"
)

func (b *builder) initControlPlane(ctx context.Context) error {
	spec := &b.in.Config.Spec
	b.plan.Role = provisioning.RoleInit
	data := b.additionalData()
	cc, err := kubeadmtypes.MarshalClusterConfigurationForVersion(&spec.ClusterConfiguration, b.version, data)
	if err != nil {
		b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "clusterConfiguration"), "cannot write kubeadm ClusterConfiguration for Kubernetes %s: %v", b.version, err)
		return nil
	}
	ic, err := kubeadmtypes.MarshalInitConfigurationForVersion(&spec.InitConfiguration, b.version)
	if err != nil {
		b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "initConfiguration"), "cannot write kubeadm InitConfiguration for Kubernetes %s: %v", b.version, err)
		return nil
	}
	b.certs = secret.NewCertificatesForInitialControlPlane(&spec.ClusterConfiguration)
	generate := b.in.GenerateMissingCertificates && !b.in.Cluster.Spec.ControlPlaneRef.IsDefined()
	if err := b.lookupCertificates(ctx, generate); err != nil {
		return err
	}
	if !generate && !b.in.Cluster.Spec.ControlPlaneRef.IsDefined() {
		// CABPK would generate them here; a caller that cannot save generated
		// CAs (the CLI) must supply them, or the node gets CAs nobody else has.
		for _, c := range b.certs {
			if c.KeyPair == nil && !c.External {
				ref := b.in.Cluster.Namespace + "/" + secret.Name(b.in.Cluster.Name, c.Purpose)
				b.ps.missingSecret(secretRef(b.in.Cluster.Namespace, secret.Name(b.in.Cluster.Name, c.Purpose)), provisioning.NewPath("data"), ref,
					"not found; the first control-plane node needs the cluster's %s certificate", c.Purpose)
			}
		}
	}
	return b.common(ctx, b.certs.AsFiles(), nil, b.kubeadmFile(initConfigPath, "---\n"+cc+"\n---\n"+ic, "---\n"+cc+"\n---\n"+ic), b.kubeadmCommand("init", initConfigPath))
}

// additionalData is what CABPK takes from the Cluster and Machine into the
// ClusterConfiguration; it also defaults controlPlaneEndpoint in the spec.
func (b *builder) additionalData() *upstream.AdditionalData {
	cluster, spec := b.in.Cluster, &b.in.Config.Spec
	data := &upstream.AdditionalData{ClusterName: ptr.To(cluster.Name)}
	if spec.ClusterConfiguration.ControlPlaneEndpoint == "" && cluster.Spec.ControlPlaneEndpoint.IsValid() {
		spec.ClusterConfiguration.ControlPlaneEndpoint = cluster.Spec.ControlPlaneEndpoint.String()
	}
	net := &cluster.Spec.ClusterNetwork
	if net.ServiceDomain != "" {
		data.DNSDomain = ptr.To(net.ServiceDomain)
	}
	if len(net.Services.CIDRBlocks) > 0 {
		data.ServiceSubnet = ptr.To(net.Services.String())
	}
	if len(net.Pods.CIDRBlocks) > 0 {
		data.PodSubnet = ptr.To(net.Pods.String())
	}
	if v := b.in.version(); v != "" {
		data.KubernetesVersion = ptr.To(v)
	}
	if t := spec.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds; t != nil {
		data.ControlPlaneComponentHealthCheckSeconds = t
	}
	return data
}

func (b *builder) joinControlPlane(ctx context.Context) error {
	spec := &b.in.Config.Spec
	b.plan.Role = provisioning.RoleJoinControlPlane
	if spec.JoinConfiguration.ControlPlane == nil {
		spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
	}
	b.certs = secret.NewControlPlaneJoinCerts(&spec.ClusterConfiguration)
	if err := b.lookupCertificates(ctx, false); err != nil {
		return err
	}
	if b.ensureCertificates(); b.ps.err() != nil {
		return nil
	}
	extra, err := b.discovery()
	if err != nil {
		return err
	}
	join, err := kubeadmtypes.MarshalJoinConfigurationForVersion(&spec.JoinConfiguration, b.version)
	if err != nil {
		b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "joinConfiguration"), "cannot write kubeadm JoinConfiguration for Kubernetes %s: %v", b.version, err)
		return nil
	}
	return b.common(ctx, b.certs.AsFiles(), extra, b.kubeadmFile(joinConfigPath, join, "---\n"+join), b.kubeadmCommand("join", joinConfigPath))
}

func (b *builder) joinWorker(ctx context.Context) error {
	spec := &b.in.Config.Spec
	b.plan.Role = provisioning.RoleJoinWorker
	if spec.JoinConfiguration.ControlPlane != nil {
		b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "joinConfiguration", "controlPlane"), "must not be set: %s is a worker", b.in.ownerRef())
		return nil
	}
	b.certs = secret.NewCertificatesForWorker(spec.JoinConfiguration.CACertPath)
	if err := b.lookupCertificates(ctx, false); err != nil {
		return err
	}
	if b.ensureCertificates(); b.ps.err() != nil {
		return nil
	}
	extra, err := b.discovery()
	if err != nil {
		return err
	}
	// Workers start tainted until Cluster API has seen them (CABPK adds this
	// to the rendered copy only; the spec keeps what the user wrote).
	join := spec.JoinConfiguration.DeepCopy()
	taints := ptr.Deref(join.NodeRegistration.Taints, []corev1.Taint{})
	if !hasTaint(taints, clusterv1.NodeUninitializedTaint) {
		join.NodeRegistration.Taints = ptr.To(append(taints, clusterv1.NodeUninitializedTaint))
	}
	data, err := kubeadmtypes.MarshalJoinConfigurationForVersion(join, b.version)
	if err != nil {
		b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "joinConfiguration"), "cannot write kubeadm JoinConfiguration for Kubernetes %s: %v", b.version, err)
		return nil
	}
	return b.common(ctx, nil, extra, b.kubeadmFile(joinConfigPath, "---\n"+data, "---\n"+data), b.kubeadmCommand("join", joinConfigPath))
}

// kubeadmFile is the kubeadm configuration file: CABPK's cloud-config writes
// it under /run/kubeadm with role-specific document markers, its Ignition
// output always at /etc/kubeadm.yml, readable by root only.
func (b *builder) kubeadmFile(cloudConfigPath, cloudConfigContent, ignitionContent string) provisioning.File {
	if b.ignition {
		return provisioning.File{Path: ignitionConfigPath, Permissions: "0600", Content: ignitionContent, BootstrapInput: true}
	}
	f := generatedFile(cloudConfigPath, cloudConfigContent)
	f.BootstrapInput = true
	return f
}

func (b *builder) kubeadmCommand(sub, cloudConfigPath string) string {
	path := cloudConfigPath
	if b.ignition {
		path = ignitionConfigPath
	}
	return fmt.Sprintf("kubeadm %s --config %s %s", sub, path, b.verbosity())
}

func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

func generatedFile(path, content string) provisioning.File {
	return provisioning.File{Path: path, Owner: "root:root", Permissions: "0640", Content: content}
}
