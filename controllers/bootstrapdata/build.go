package bootstrapdata

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// Builder builds and renders the bootstrap data of one KubeadmConfig from
// the objects it reads. It only reads: what the build produces (generated
// certificates, Secrets the data refers to, spec defaults) is the caller's
// to write.
type Builder struct {
	// Client reads the KubeadmConfigTemplate a config was cloned from, and
	// the Secrets SecretCachingClient does not have (contentFrom,
	// passwdFrom).
	Client client.Reader
	// SecretCachingClient reads cluster certificate Secrets first.
	SecretCachingClient client.Reader
	// APIReader reads the control-plane object, for its version.
	APIReader client.Reader
	// Extensions run in order on every build.
	Extensions []Extension
	// Strict refuses data with render warnings for every config that does
	// not say otherwise with the nodeboot.dev/strict annotation.
	Strict bool
	// Rebuild builds data that exists already: certificates that are
	// missing are reported instead of generated.
	Rebuild bool
}

// Target is the config to build, with the owner and Cluster it was read
// with.
type Target struct {
	Config  *bootstrapv1.KubeadmConfig
	Owner   *Owner
	Cluster *clusterv1.Cluster
}

// Data is a built and rendered node configuration.
type Data struct {
	Result *bootstrap.Result
	Output *provisioning.Output
}

// Build hands the config to bootstrap.Build and renders the result; this
// is the only place bytes come from. Extensions see a copy of the config
// and the built Result; t.Config itself is not changed. secrets (from
// NewSecrets) records which Secrets were missing.
func (b *Builder) Build(ctx context.Context, t Target, secrets *Secrets) (*Data, error) {
	cfg := t.Config.DeepCopy()
	for _, ext := range b.Extensions {
		if err := ext.MutateConfig(ctx, t.Cluster, cfg); err != nil {
			return nil, fmt.Errorf("extension %T: mutate config: %w", ext, err)
		}
	}
	// Only a file template can use the control plane's version, so only
	// then is the control-plane object read. CABPK reads it on every
	// render, and a control plane of another provider (another API group,
	// or another kind than kubeadmcontrolplanes) is not in the shipped
	// role: its workers would get no data at all.
	cpVersion := ""
	if i := templateFile(cfg); i >= 0 {
		v, err := b.controlPlaneVersion(ctx, t.Cluster)
		if err != nil {
			return nil, controlPlaneReadError(t.Cluster, i, err)
		}
		cpVersion = v
	}
	tmpl, err := b.template(ctx, t.Config)
	if err != nil {
		return nil, err
	}
	in := bootstrap.Input{
		Config:                      cfg,
		Cluster:                     t.Cluster,
		Machine:                     t.Owner.Machine,
		MachinePool:                 t.Owner.Pool,
		Template:                    tmpl,
		Secrets:                     secrets,
		ControlPlaneVersion:         cpVersion,
		GenerateMissingCertificates: !b.Rebuild,
		Strict:                      b.Strict,
	}
	res, err := bootstrap.Build(ctx, in)
	if err != nil {
		return nil, err
	}
	for _, ext := range b.Extensions {
		if err := ext.MutatePlan(ctx, t.Cluster, cfg, res); err != nil {
			return nil, fmt.Errorf("extension %T: mutate plan: %w", ext, err)
		}
	}
	out, err := res.Render()
	if err != nil {
		return nil, err
	}
	return &Data{Result: res, Output: out}, nil
}

// templateFile is the index of the first spec.files entry rendered as a
// template, -1 when there is none.
func templateFile(config *bootstrapv1.KubeadmConfig) int {
	for i := range config.Spec.Files {
		if config.Spec.Files[i].ContentFormat == bootstrapv1.FileContentFormatTemplate {
			return i
		}
	}
	return -1
}

// controlPlaneVersion is spec.version of the Cluster's control-plane object,
// "" when it has none or the object has no version. As in CABPK the object
// is read at the API version of the current contract, uncached.
func (b *Builder) controlPlaneVersion(ctx context.Context, cluster *clusterv1.Cluster) (string, error) {
	if !cluster.Spec.ControlPlaneRef.IsDefined() {
		return "", nil
	}
	cp, err := external.GetObjectFromContractVersionedRef(ctx, b.APIReader, cluster.Spec.ControlPlaneRef, cluster.Namespace)
	if err != nil {
		return "", fmt.Errorf("read control plane version: %w", err)
	}
	v, _, err := unstructured.NestedString(cp.Object, "spec", "version")
	if err != nil {
		return "", fmt.Errorf("read control plane version of %s %s: spec.version: %w", cp.GetKind(), klog.KObj(cp), err)
	}
	return v, nil
}

// template is the KubeadmConfigTemplate the config was cloned from, for its
// nodeboot annotations; nil when there is none.
func (b *Builder) template(ctx context.Context, config *bootstrapv1.KubeadmConfig) (*bootstrapv1.KubeadmConfigTemplate, error) {
	name := config.Annotations[clusterv1.TemplateClonedFromNameAnnotation]
	if name == "" || config.Annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] != bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate").GroupKind().String() {
		return nil, nil
	}
	t := &bootstrapv1.KubeadmConfigTemplate{}
	if err := b.Client.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get KubeadmConfigTemplate %s/%s: %w", config.Namespace, name, err)
	}
	return t, nil
}
