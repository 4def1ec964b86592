package differential

import (
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// gzipHello is "hello world\n" gzipped, as users put it in files.
const gzipHello = "H4sIAAAAAAACA8tIzcnJVyjPL8pJ4QIA1eA5ZQwAAAA="

func (g *gen) spec(s *scenario) {
	spec := &s.config.Spec
	ns := s.config.Namespace
	for i, n := 0, g.r.IntN(6); i < n; i++ {
		f := bootstrapv1.File{Path: fmt.Sprintf("/etc/gen/%d/%s", i, g.pick("a.conf", "b.txt", "c d.sh", "ü.txt"))}
		if g.chance(70) {
			f.Owner = g.pick("root:root", "root", "nobody:nogroup", "1000:1000")
		}
		if g.chance(70) {
			f.Permissions = g.pick("0644", "0600", "0755", "0400", "644")
		}
		if g.chance(20) {
			f.Append = g.optBool()
		}
		switch g.r.IntN(6) {
		case 0:
			f.Encoding, f.Content = bootstrapv1.Base64, base64.StdEncoding.EncodeToString([]byte(g.text()))
		case 1:
			f.Encoding, f.Content = bootstrapv1.GzipBase64, gzipHello
		case 2:
			f.Encoding, f.Content = bootstrapv1.Gzip, gzipHello
		case 3:
			name := fmt.Sprintf("%s-file-%d", s.name, i)
			f.ContentFrom = bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: name, Key: "data"}}
			s.secrets = append(s.secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Data: map[string][]byte{"data": []byte(g.text())}})
		case 4:
			f.ContentFormat = bootstrapv1.FileContentFormatTemplate
			f.Content = g.pick("cp: {{ .controlPlane.version }}\n", "{{ if .controlPlane }}has{{ else }}none{{ end }}\n", "plain template\n")
		default:
			f.Content = g.text()
			if g.chance(20) {
				f.ContentFormat = bootstrapv1.FileContentFormatRaw
			}
		}
		spec.Files = append(spec.Files, f)
	}
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		u := bootstrapv1.User{Name: fmt.Sprintf("user%d", i)}
		if g.chance(50) {
			u.Gecos = g.pick("Ops user", "Build bot")
		}
		if g.chance(50) {
			u.Groups = g.pick("adm, sudo", "docker", "users")
		}
		if g.chance(30) {
			u.HomeDir = "/home/u" + fmt.Sprint(i)
		}
		if g.chance(30) {
			u.Inactive = g.optBool()
		}
		if g.chance(50) {
			u.Shell = g.pick("/bin/bash", "/bin/sh")
		}
		switch g.r.IntN(3) {
		case 0:
			u.Passwd = "$6$rounds=4096$salt$hash" + fmt.Sprint(i)
		case 1:
			name := fmt.Sprintf("%s-pw-%d", s.name, i)
			u.PasswdFrom = bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: name, Key: "passwd"}}
			s.secrets = append(s.secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Data: map[string][]byte{"passwd": []byte("$6$from$secret" + fmt.Sprint(i))}})
		}
		if g.chance(30) {
			u.PrimaryGroup = "users"
		}
		if g.chance(50) {
			u.LockPassword = g.optBool()
		}
		if g.chance(40) {
			u.Sudo = "ALL=(ALL) NOPASSWD:ALL"
		}
		for k, nk := 0, g.r.IntN(3); k < nk; k++ {
			u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%d key%d@example", k, k))
		}
		spec.Users = append(spec.Users, u)
	}
	if g.chance(40) {
		spec.NTP.Enabled = g.optBool()
		for k, n := 0, g.r.IntN(3); k < n; k++ {
			spec.NTP.Servers = append(spec.NTP.Servers, fmt.Sprintf("time%d.example.com", k))
		}
	}
	if g.chance(30) {
		g.disks(spec)
	}
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		m := bootstrapv1.MountPoints{g.pick("LABEL=data", "/dev/sdb1", "etcd_disk"), fmt.Sprintf("/mnt/m%d", i)}
		if g.chance(50) {
			m = append(m, "ext4", "defaults,nofail", "0", "2")
		}
		spec.Mounts = append(spec.Mounts, m)
	}
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		spec.BootCommands = append(spec.BootCommands, g.command())
	}
	for i, n := 0, g.r.IntN(4); i < n; i++ {
		spec.PreKubeadmCommands = append(spec.PreKubeadmCommands, g.command())
	}
	for i, n := 0, g.r.IntN(4); i < n; i++ {
		spec.PostKubeadmCommands = append(spec.PostKubeadmCommands, g.command())
	}
	if g.chance(40) {
		spec.Verbosity = ptr.To(int32(g.r.IntN(11)))
	}
	g.kubeadm(s)
}

func (g *gen) disks(spec *bootstrapv1.KubeadmConfigSpec) {
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		p := bootstrapv1.Partition{Device: fmt.Sprintf("/dev/sd%c", 'b'+i), Overwrite: g.optBool()}
		if g.chance(50) {
			p.TableType = g.pick("gpt", "mbr")
		}
		if g.chance(40) {
			p.DiskLayout = []bootstrapv1.PartitionSpec{{Percentage: 60, PartitionType: g.pick("Linux", "LVM", "", "83")}, {Percentage: 40}}
		} else if g.chance(80) {
			p.Layout = ptr.To(g.chance(50))
		}
		spec.DiskSetup.Partitions = append(spec.DiskSetup.Partitions, p)
	}
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		f := bootstrapv1.Filesystem{Device: fmt.Sprintf("/dev/sd%c1", 'b'+i), Filesystem: g.pick("ext4", "xfs"), Label: fmt.Sprintf("disk%d", i)}
		if g.chance(40) {
			f.Partition = g.pick("auto", "any", "none")
		}
		f.Overwrite = g.optBool()
		if g.chance(20) {
			f.ReplaceFS = "ntfs"
		}
		if g.chance(40) {
			f.ExtraOpts = []string{"-E", "lazy_itable_init=1"}
		}
		spec.DiskSetup.Filesystems = append(spec.DiskSetup.Filesystems, f)
	}
}

func (g *gen) nodeRegistration(n *bootstrapv1.NodeRegistrationOptions) {
	if g.chance(50) {
		n.Name = "'{{ ds.meta_data.local_hostname }}'"
	}
	if g.chance(30) {
		n.CRISocket = "unix:///var/run/containerd/containerd.sock"
	}
	switch g.r.IntN(3) {
	case 0:
		n.Taints = &[]corev1.Taint{}
	case 1:
		n.Taints = &[]corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}
	n.KubeletExtraArgs = g.args("cgroup-driver", "provider-id", "eviction-hard", "node-labels")
	if g.chance(30) {
		n.IgnorePreflightErrors = []string{"NumCPU", "Mem"}
	}
	if g.chance(20) {
		n.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if g.chance(20) {
		n.ImagePullSerial = g.optBool()
	}
}

func (g *gen) kubeadm(s *scenario) {
	spec := &s.config.Spec
	cc := &spec.ClusterConfiguration
	if g.chance(50) {
		cc.APIServer.ExtraArgs = g.args("audit-log-maxage", "enable-admission-plugins", "profiling")
		if g.chance(50) {
			cc.APIServer.CertSANs = []string{"localhost", "127.0.0.1"}
		}
		if g.chance(30) {
			cc.APIServer.ExtraVolumes = []bootstrapv1.HostPathMount{{Name: "audit", HostPath: "/var/log/audit", MountPath: "/var/log/audit", ReadOnly: g.optBool()}}
		}
	}
	if g.chance(30) {
		cc.ControllerManager.ExtraArgs = g.args("bind-address", "cluster-signing-duration")
		cc.Scheduler.ExtraArgs = g.args("bind-address")
	}
	if g.chance(20) {
		cc.ImageRepository = "registry.example.internal/k8s"
	}
	if g.chance(20) {
		cc.FeatureGates = map[string]bool{"EtcdLearnerMode": true}
	}
	if g.chance(15) && s.role != roleWorker && s.role != roleMachinePool {
		s.externalEtcd = true
		cc.Etcd.External = bootstrapv1.ExternalEtcd{Endpoints: []string{"https://10.0.0.5:2379"},
			CAFile: "/etc/kubernetes/pki/etcd/ca.crt", CertFile: "/etc/kubernetes/pki/apiserver-etcd-client.crt", KeyFile: "/etc/kubernetes/pki/apiserver-etcd-client.key"}
	} else if g.chance(30) {
		cc.Etcd.Local = bootstrapv1.LocalEtcd{DataDir: "/var/lib/etcd", ExtraArgs: g.args("quota-backend-bytes", "auto-compaction-retention")}
	}
	if g.chance(20) {
		cc.ControlPlaneEndpoint = "override.example.internal:6443"
	}
	if g.chance(20) {
		cc.CACertificateValidityPeriodDays = 3650
		cc.CertificateValidityPeriodDays = 365
	}
	switch s.role {
	case roleInit:
		g.nodeRegistration(&spec.InitConfiguration.NodeRegistration)
		if g.chance(30) {
			spec.InitConfiguration.LocalAPIEndpoint = bootstrapv1.APIEndpoint{AdvertiseAddress: "10.0.0.10", BindPort: 6443}
		}
		if g.chance(20) {
			spec.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds = ptr.To(int32(300))
		}
		if g.chance(20) {
			spec.InitConfiguration.SkipPhases = []string{"addon/kube-proxy"}
		}
		if g.chance(20) {
			spec.InitConfiguration.Patches.Directory = "/etc/kubernetes/patches"
		}
	default:
		j := &spec.JoinConfiguration
		g.nodeRegistration(&j.NodeRegistration)
		if s.role == roleJoinCP && g.chance(50) {
			j.ControlPlane = &bootstrapv1.JoinControlPlane{LocalAPIEndpoint: bootstrapv1.APIEndpoint{AdvertiseAddress: "10.0.0.11", BindPort: 6443}}
		}
		if g.chance(20) {
			j.Timeouts.DiscoverySeconds = ptr.To(int32(120))
		}
		if g.chance(15) {
			j.CACertPath = "/etc/kubernetes/pki/ca.crt"
		}
		if g.chance(20) {
			j.Discovery.File = bootstrapv1.FileDiscovery{KubeConfigPath: "/tmp/discovery.kubeconfig", KubeConfig: bootstrapv1.FileDiscoveryKubeConfig{
				User: bootstrapv1.KubeConfigUser{Exec: bootstrapv1.KubeConfigAuthExec{Command: "/usr/bin/auth", Args: []string{"token"}}}}}
			return
		}
		j.Discovery.BootstrapToken.Token = "abcdef.0123456789abcdef"
		if g.chance(20) {
			j.Discovery.BootstrapToken.APIServerEndpoint = "lb.example.internal:6443"
		}
		if g.chance(10) {
			j.Discovery.BootstrapToken.CACertHashes = []string{"sha256:0000000000000000000000000000000000000000000000000000000000000000"}
		}
	}
}
