package bootstrap

import (
	"fmt"

	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/provisioning"
)

// discovery fills in kubeadm discovery the way CABPK does and returns the
// discovery kubeconfig file to write, if any.
func (b *builder) discovery() ([]bootstrapv1.File, error) {
	d := &b.in.Config.Spec.JoinConfiguration.Discovery
	cluster := b.in.Cluster
	if d.File.IsDefined() {
		kc := &d.File.KubeConfig
		if !kc.IsDefined() {
			return nil, nil
		}
		if kc.Cluster.Server == "" {
			if !cluster.Spec.ControlPlaneEndpoint.IsValid() {
				return nil, ErrNoControlPlaneEndpoint
			}
			kc.Cluster.Server = "https://" + cluster.Spec.ControlPlaneEndpoint.String()
		}
		if len(kc.Cluster.CertificateAuthorityData) == 0 {
			ca := b.certs.GetByPurpose(secret.ClusterCA)
			if ca == nil || ca.KeyPair == nil {
				b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "joinConfiguration", "discovery", "file", "kubeConfig", "cluster", "certificateAuthorityData"), "empty, and the cluster CA is not available to fill it in")
				return nil, nil
			}
			kc.Cluster.CertificateAuthorityData = ca.KeyPair.Cert
		}
		f, err := discoveryKubeConfig(d.File)
		if err != nil {
			b.ps.errorf(b.in.configRef(), provisioning.NewPath("spec", "joinConfiguration", "discovery", "file", "kubeConfig"), "%v", err)
			return nil, nil
		}
		return []bootstrapv1.File{*f}, nil
	}

	bt := &d.BootstrapToken
	if len(bt.CACertHashes) == 0 {
		if ca := b.certs.GetByPurpose(secret.ClusterCA); ca != nil && ca.KeyPair != nil {
			hashes, err := ca.Hashes()
			if err != nil {
				b.ps.errorf(secretRef(cluster.Namespace, secret.Name(cluster.Name, secret.ClusterCA)), provisioning.NewPath("data").Key(secret.TLSCrtDataName), "%v", err)
				return nil, nil
			}
			bt.CACertHashes = hashes
		}
	}
	if bt.APIServerEndpoint == "" {
		if !cluster.Spec.ControlPlaneEndpoint.IsValid() {
			return nil, ErrNoControlPlaneEndpoint
		}
		bt.APIServerEndpoint = cluster.Spec.ControlPlaneEndpoint.String()
	}
	if bt.Token == "" {
		return nil, ErrNoBootstrapToken
	}
	if len(bt.CACertHashes) == 0 {
		bt.UnsafeSkipCAVerification = ptr.To(true)
	}
	return nil, nil
}

// discoveryKubeConfig is the kubeconfig kubeadm reads for file discovery, built
// exactly as CABPK builds it.
func discoveryKubeConfig(cfg bootstrapv1.FileDiscovery) (*bootstrapv1.File, error) {
	c := cfg.KubeConfig.Cluster
	cluster := clientcmdv1.Cluster{
		Server:                   c.Server,
		TLSServerName:            c.TLSServerName,
		InsecureSkipTLSVerify:    ptr.Deref(c.InsecureSkipTLSVerify, false),
		CertificateAuthorityData: c.CertificateAuthorityData,
		ProxyURL:                 c.ProxyURL,
	}
	user := clientcmdv1.AuthInfo{}
	u := cfg.KubeConfig.User
	if u.AuthProvider.IsDefined() {
		user.AuthProvider = &clientcmdv1.AuthProviderConfig{Name: u.AuthProvider.Name, Config: u.AuthProvider.Config}
	}
	if u.Exec.IsDefined() {
		apiVersion := u.Exec.APIVersion
		if apiVersion == "" {
			apiVersion = "client.authentication.k8s.io/v1"
		}
		user.Exec = &clientcmdv1.ExecConfig{
			Command:            u.Exec.Command,
			Args:               u.Exec.Args,
			APIVersion:         apiVersion,
			ProvideClusterInfo: ptr.Deref(u.Exec.ProvideClusterInfo, false),
			InteractiveMode:    "Never",
		}
		for _, env := range u.Exec.Env {
			user.Exec.Env = append(user.Exec.Env, clientcmdv1.ExecEnvVar{Name: env.Name, Value: env.Value})
		}
	}
	kubeconfig := clientcmdv1.Config{
		CurrentContext: "default",
		Contexts:       []clientcmdv1.NamedContext{{Name: "default", Context: clientcmdv1.Context{Cluster: "default", AuthInfo: "default"}}},
		Clusters:       []clientcmdv1.NamedCluster{{Name: "default", Cluster: cluster}},
		AuthInfos:      []clientcmdv1.NamedAuthInfo{{Name: "default", AuthInfo: user}},
	}
	out, err := yaml.Marshal(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("marshal discovery kubeconfig: %w", err)
	}
	return &bootstrapv1.File{Path: cfg.KubeConfigPath, Owner: "root:root", Permissions: "0640", Content: string(out)}, nil
}
