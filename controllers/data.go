package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// bootstrapData is a built and rendered node configuration.
type bootstrapData struct {
	result *bootstrap.Result
	output *provisioning.Output
}

// buildData hands the config to bootstrap.Build and renders the result; this
// is the only place bytes come from. Extensions see a copy of the config
// and the built Result; config itself is only changed by persistDefaults.
func (r *Reconciler) buildData(ctx context.Context, s *scope, secrets *secretGetter) (*bootstrapData, error) {
	cfg := s.config.DeepCopy()
	for _, ext := range r.Extensions {
		if err := ext.MutateConfig(ctx, s.cluster, cfg); err != nil {
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
		v, err := r.controlPlaneVersion(ctx, s.cluster)
		if err != nil {
			return nil, controlPlaneReadError(s.cluster, i, err)
		}
		cpVersion = v
	}
	tmpl, err := r.template(ctx, s.config)
	if err != nil {
		return nil, err
	}
	in := bootstrap.Input{
		Config:                      cfg,
		Cluster:                     s.cluster,
		Machine:                     s.owner.machine,
		MachinePool:                 s.owner.pool,
		Template:                    tmpl,
		Secrets:                     secrets,
		ControlPlaneVersion:         cpVersion,
		GenerateMissingCertificates: !s.rebuild,
		Strict:                      r.Strict,
	}
	res, err := bootstrap.Build(ctx, in)
	if err != nil {
		return nil, err
	}
	for _, ext := range r.Extensions {
		if err := ext.MutatePlan(ctx, s.cluster, cfg, res); err != nil {
			return nil, fmt.Errorf("extension %T: mutate plan: %w", ext, err)
		}
	}
	out, err := res.Render()
	if err != nil {
		return nil, err
	}
	return &bootstrapData{result: res, output: out}, nil
}

// persistDefaults copies into the stored config what CABPK writes back to
// the spec while generating data: the control-plane endpoint of an init, the
// controlPlane stanza of a control-plane join and the discovery defaults
// (CA hashes, API server endpoint, skip-verification) of any join.
func persistDefaults(config *bootstrapv1.KubeadmConfig, built *bootstrapv1.KubeadmConfig, role provisioning.Role) {
	switch role {
	case provisioning.RoleInit:
		config.Spec.ClusterConfiguration.ControlPlaneEndpoint = built.Spec.ClusterConfiguration.ControlPlaneEndpoint
	case provisioning.RoleJoinControlPlane:
		if config.Spec.JoinConfiguration.ControlPlane == nil {
			config.Spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
		}
		fallthrough
	case provisioning.RoleJoinWorker:
		config.Spec.JoinConfiguration.Discovery = *built.Spec.JoinConfiguration.Discovery.DeepCopy()
	}
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

// ControlPlaneForbiddenError is a control-plane object the manager may not
// read while a file template needs its version. The reconciler shows it in
// DataSecretAvailable and retries: granting the permission is enough.
type ControlPlaneForbiddenError struct {
	// File is the index in spec.files of the first template.
	File int
	// Ref is the Cluster's spec.controlPlaneRef; Namespace is the Cluster's.
	Ref       clusterv1.ContractVersionedObjectReference
	Namespace string
	// Resource is the resource the API server refused (plural, from its
	// answer), "" when the answer did not say.
	Resource string
	err      error
}

func (e *ControlPlaneForbiddenError) Error() string {
	what := e.Ref.Kind
	if e.Resource != "" {
		what = e.Resource
	}
	return fmt.Sprintf("spec.files[%d] is a template and needs the version of the Cluster's control plane %s %s, which the manager may not read: grant get on %s in API group %s (and get on customresourcedefinitions)",
		e.File, e.Ref.Kind, klog.KRef(e.Namespace, e.Ref.Name), what, e.Ref.APIGroup)
}

func (e *ControlPlaneForbiddenError) Unwrap() error { return e.err }

// controlPlaneReadError names the permission when the read was forbidden.
func controlPlaneReadError(cluster *clusterv1.Cluster, file int, err error) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	fe := &ControlPlaneForbiddenError{File: file, Ref: cluster.Spec.ControlPlaneRef, Namespace: cluster.Namespace, err: err}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Details != nil {
		if d := st.Status().Details; d.Kind != "" && d.Group == cluster.Spec.ControlPlaneRef.APIGroup {
			fe.Resource = d.Kind
		}
	}
	return fe
}

// controlPlaneVersion is spec.version of the Cluster's control-plane object,
// "" when it has none or the object has no version. As in CABPK the object
// is read at the API version of the current contract, uncached.
func (r *Reconciler) controlPlaneVersion(ctx context.Context, cluster *clusterv1.Cluster) (string, error) {
	if !cluster.Spec.ControlPlaneRef.IsDefined() {
		return "", nil
	}
	cp, err := external.GetObjectFromContractVersionedRef(ctx, r.APIReader, cluster.Spec.ControlPlaneRef, cluster.Namespace)
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
func (r *Reconciler) template(ctx context.Context, config *bootstrapv1.KubeadmConfig) (*bootstrapv1.KubeadmConfigTemplate, error) {
	name := config.Annotations[clusterv1.TemplateClonedFromNameAnnotation]
	if name == "" || config.Annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] != bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate").GroupKind().String() {
		return nil, nil
	}
	t := &bootstrapv1.KubeadmConfigTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get KubeadmConfigTemplate %s/%s: %w", config.Namespace, name, err)
	}
	return t, nil
}

// secretGetter is the bootstrap.SecretGetter of one reconciliation. Cluster
// certificate Secrets are read as util/secret's LookupCached reads them (the
// cache first, the API server when the cache does not have them yet); other
// Secrets (contentFrom, passwdFrom) straight from the API server, as CABPK
// does. It remembers which Secrets did not exist, so a failure caused by a
// Secret that may yet appear is retried instead of reported as terminal.
type secretGetter struct {
	cached, live client.Reader
	mu           sync.Mutex
	missing      map[string]bool
}

func (r *Reconciler) newSecretGetter() *secretGetter {
	return &secretGetter{cached: r.SecretCachingClient, live: r.Client, missing: map[string]bool{}}
}

// SecretData implements bootstrap.SecretGetter.
func (g *secretGetter) SecretData(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	s := &corev1.Secret{}
	if secret.HasPurposeSuffix(name) {
		err := g.cached.Get(ctx, key, s)
		if err == nil {
			return s.Data, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	if err := g.live.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			g.mu.Lock()
			g.missing[namespace+"/"+name] = true
			g.mu.Unlock()
			return nil, fmt.Errorf("%w: %s/%s", bootstrap.ErrSecretNotFound, namespace, name)
		}
		return nil, err
	}
	return s.Data, nil
}

func (g *secretGetter) wasMissing(namespacedName string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.missing[namespacedName]
}

var _ bootstrap.SecretGetter = (*secretGetter)(nil)
