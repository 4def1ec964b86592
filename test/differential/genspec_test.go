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

// secretBytes are Secret data for contentFrom/passwdFrom: a Secret holds
// bytes, so unlike spec strings these may be invalid UTF-8 too.
var secretBytes = []string{"$6$from$secret", "plain\n", "a: b # c\n", "{{ .x }}", "{% raw %}", "\xff\xfe not utf-8",
	"nul\x00", "crlf\r\n", "  lead", "trail  ", "- dash", "yes", "~", "", "multi\nline\nsecret", "\u2028", "😀"}

// templates are contentFormat: Template contents: Go templates CABPK's
// reconciler renders (some of which it refuses).
var templates = []string{"cp: {{ .controlPlane.version }}\n", "{{ if .controlPlane }}has{{ else }}none{{ end }}\n",
	"plain template\n", "{{ .missing }}\n", "{{ .controlPlane.missing }}\n", "{{ unclosed\n", "{{ index . \"x\" }}",
	"{{/* comment */}}x", "{{ printf \"%q\" \"a: b\" }}\n", "{{ \"{{ ds.meta_data.local_hostname }}\" }}\n", "{{ .controlPlane.version | len }}\n",
	"{{ if }}{{ end }}", "{{ template \"x\" }}", "{{ define \"x\" }}y{{ end }}{{ template \"x\" }}", "{% jinja %} {{ .controlPlane }}\n"}

// val draws a string for a field: usually one of the field's ordinary
// values, otherwise one of the YAML-special ones.
func (g *gen) val(pct int, ordinary ...string) string {
	if len(ordinary) == 0 || g.spicy(pct) {
		return g.pick(special...)
	}
	return g.pick(ordinary...)
}

// ordinary is the first n values when safe, else all of them: the caller
// lists the values CABPK's legacy Ignition renders first.
func (g *gen) ordinary(n int, values ...string) []string {
	if g.safe {
		return values[:n]
	}
	return values
}

// opt is val, or "" (the field omitted) with probability 1-set%.
func (g *gen) opt(set, pct int, ordinary ...string) string {
	if !g.chance(set) {
		return ""
	}
	return g.val(pct, ordinary...)
}

// commands draws up to max commands (items: MinLength 1).
func (g *gen) commands(max int) []string {
	var out []string
	for i, n := 0, g.r.IntN(max+1); i < n; i++ {
		if g.spicy(60) {
			out = append(out, g.pick(commands...))
		} else {
			out = append(out, g.pick(commands[:8]...))
		}
	}
	return out
}

func (g *gen) strs(max, pct int, ordinary ...string) []string {
	var out []string
	for i, n := 0, g.r.IntN(max+1); i < n; i++ {
		out = append(out, g.val(pct, ordinary...))
	}
	return out
}

// file draws one spec.files entry; cloud-config allows every encoding.
func (g *gen) file(s *scenario, i int, ignition bool) bootstrapv1.File {
	ns := s.config.Namespace
	f := bootstrapv1.File{Path: fmt.Sprintf("/etc/gen/%d/%s", i, g.pick("a.conf", "b.txt", "c d.sh", "ü.txt"))}
	if g.spicy(45) {
		// From the pool: sometimes the same path twice, which the webhook refuses.
		f.Path = g.pick(paths...)
	}
	if !g.spicy(30) {
		f.Owner = g.val(25, owners[:5]...)
		if g.spicy(50) {
			f.Owner = g.pick(owners...)
		}
	}
	if !g.spicy(30) {
		// Without permissions CABPK's Ignition fails (the CLC transpiler
		// warns "mode unspecified" and CABPK transpiles strictly).
		f.Permissions = g.pick(permissions[:7]...)
		if g.spicy(60) {
			f.Permissions = g.pick(permissions...)
		}
	}
	if g.chance(20) {
		f.Append = g.optBool()
	}
	kinds := 7
	if ignition {
		kinds = 5 // no gzip: the webhook forbids it with Ignition
	}
	switch k := g.r.IntN(kinds); k {
	case 0:
		f.Encoding, f.Content = bootstrapv1.Base64, base64.StdEncoding.EncodeToString([]byte(g.pick(contents...)))
		if g.spicy(10) {
			f.Content = g.pick("not base64!", "YQ", "YQ==\n", "====")
		}
	case 1:
		name := fmt.Sprintf("%s-file-%d", s.name, i)
		f.ContentFrom = bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: name, Key: "data"}}
		data := "secret content\n"
		if g.spicy(100) {
			data = g.pick(append(contents, secretBytes...)...)
		}
		s.secrets = append(s.secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string][]byte{"data": []byte(data)}})
		if g.chance(20) {
			f.Encoding = bootstrapv1.Base64
			s.secrets[len(s.secrets)-1].Data["data"] = []byte(base64.StdEncoding.EncodeToString([]byte(data)))
		}
		if g.chance(15) {
			f.ContentFormat = bootstrapv1.FileContentFormatTemplate
			s.secrets[len(s.secrets)-1].Data["data"] = []byte(g.template())
		}
	case 2:
		f.ContentFormat = bootstrapv1.FileContentFormatTemplate
		f.Content = g.template()
	case 3:
		f.Content = g.val(100, "plain content")
	case 5:
		f.Encoding, f.Content = bootstrapv1.GzipBase64, gzipHello
	case 6:
		f.Encoding, f.Content = bootstrapv1.Gzip, g.pick(gzipHello, "raw not gzip")
	default:
		f.Content = g.text()
		if g.chance(20) {
			f.ContentFormat = bootstrapv1.FileContentFormatRaw
		}
	}
	return f
}

// template is content for contentFormat: Template; the spicy ones include
// those CABPK's reconciler cannot parse or execute.
func (g *gen) template() string {
	if g.spicy(50) {
		return g.pick(templates...)
	}
	return g.pick(templates[:3]...)
}

// text is file content made of awkward lines.
func (g *gen) text() string {
	if !g.spicy(100) {
		return g.pick("plain\n", "key=value\n", "two\nlines\n", "a")
	}
	if g.chance(50) {
		return g.pick(contents...)
	}
	var out string
	for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
		out += g.pick(contents...)
	}
	return out
}

// user draws one spec.users entry.
func (g *gen) user(s *scenario, i int) bootstrapv1.User {
	u := bootstrapv1.User{Name: fmt.Sprintf("user%d", i)}
	if g.spicy(35) {
		u.Name = g.val(50, "a/b", "../etc/x", "x/..", "root", "core", "..", ".", "Ünï", "ops-user", "user.name", "user@host")
	}
	u.Gecos = g.opt(50, 50, "Ops user", "Build bot", "Jane Doe,Room 1,555-1234")
	u.Groups = g.opt(50, 40, "adm, sudo", "docker", "users", "a,b", "wheel, docker, adm", ", leading", "trailing, ")
	homes := []string{"/home/u", "/var/lib/x"}
	if !g.safe {
		homes = append(homes, paths...)
	}
	u.HomeDir = g.opt(30, 40, homes...)
	if g.chance(30) {
		u.Inactive = g.optBool()
	}
	u.Shell = g.opt(50, 30, "/bin/bash", "/bin/sh", "/usr/sbin/nologin", `C:\Windows\System32\cmd.exe`)
	switch g.r.IntN(3) {
	case 0:
		u.Passwd = g.val(40, g.ordinary(4, "$6$rounds=4096$salt$hash", "$1$x$y", "x #y", "$6$a:b", "!", "*")...)
	case 1:
		name := fmt.Sprintf("%s-pw-%d", s.name, i)
		u.PasswdFrom = bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: name, Key: "passwd"}}
		s.secrets = append(s.secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.config.Namespace},
			Data: map[string][]byte{"passwd": []byte(g.val(100, "$6$from$secret"))}})
	}
	u.PrimaryGroup = g.opt(30, 40, "users", "wheel", "0")
	if g.chance(50) {
		u.LockPassword = g.optBool()
	}
	u.Sudo = g.opt(40, 40, "ALL=(ALL) NOPASSWD:ALL", "ALL=(ALL) NOPASSWD: ALL", "ALL=(ALL) ALL", "false", "ALL=(root) /bin/ls, /bin/cat")
	u.SSHAuthorizedKeys = g.strs(2, 30, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI0 key0@example", "ssh-rsa AAAAB3NzaC1yc2E two",
		"ssh-ed25519 AAAA three # note", `command="echo hi",no-pty ssh-ed25519 AAAA four`, "from=\"10.0.0.0/8\" ssh-rsa AAAA five")
	return u
}

func (g *gen) ntp(spec *bootstrapv1.KubeadmConfigSpec) {
	spec.NTP.Enabled = g.optBool()
	spec.NTP.Servers = g.strs(3, 30, "time.example.com", "10.0.0.1", "fd00::123", "pool.ntp.org iburst", "0.pool.ntp.org")
}

// disks draws diskSetup. ignition limits tableType to gpt and forbids
// replaceFS and partition (the webhook); the CRD demands exactly one of
// layout and diskLayout, and CEL-valid partition types, in both formats.
func (g *gen) disks(spec *bootstrapv1.KubeadmConfigSpec, ignition bool) {
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		p := bootstrapv1.Partition{Device: fmt.Sprintf("/dev/sd%c", 'b'+i), Overwrite: g.optBool()}
		if g.chance(25) {
			p.Device = g.val(60, g.ordinary(2, "/dev/disk/azure/scsi1/lun0", "/dev/nvme1n1", "ephemeral0", "swap", `\\.\PhysicalDrive1`)...)
		}
		if g.chance(50) {
			p.TableType = "gpt"
			if !ignition && g.chance(50) {
				p.TableType = "mbr"
			}
		}
		if g.chance(50) {
			left := int32(100)
			for k, nk := 0, 1+g.r.IntN(3); k < nk && left > 0; k++ {
				pct := 1 + g.r.Int32N(left)
				if g.chance(5) {
					pct = 100 // sums over 100 are refused by the webhook
				}
				left -= min(pct, left)
				ps := bootstrapv1.PartitionSpec{Percentage: pct}
				switch g.r.IntN(4) {
				case 0:
				case 1:
					ps.PartitionType = g.pick(gptGUIDs...)
				default:
					ps.PartitionType = g.pick(partitionTypes...)
				}
				p.DiskLayout = append(p.DiskLayout, ps)
			}
		} else {
			p.Layout = ptr.To(g.chance(50))
		}
		spec.DiskSetup.Partitions = append(spec.DiskSetup.Partitions, p)
	}
	for i, n := 0, g.r.IntN(3); i < n; i++ {
		f := bootstrapv1.Filesystem{Device: fmt.Sprintf("/dev/sd%c1", 'b'+i), Filesystem: g.val(15, g.ordinary(5, "ext4", "xfs", "swap", "btrfs", "vfat", "ntfs")...)}
		if g.chance(20) {
			f.Device = g.val(60, g.ordinary(2, "/dev/nvme1n1p1", "/dev/disk/by-label/x", "ephemeral0.1", "swap")...)
		}
		f.Label = fmt.Sprintf("disk%d", i)
		if g.spicy(25) {
			f.Label = g.opt(80, 60, "None", "etcd_disk", "ephemeral0", "data")
		}
		if !ignition && g.chance(40) {
			f.Partition = g.val(30, "auto", "any", "none", "auto|any", "1", "2")
		}
		// Without overwrite CABPK's Ignition writes "wipe_filesystem: <nil>" and fails.
		if !g.spicy(33) {
			f.Overwrite = ptr.To(g.chance(50))
		}
		if !ignition && g.chance(20) {
			f.ReplaceFS = g.val(30, "ntfs", "ext4")
		}
		if g.chance(40) {
			f.ExtraOpts = g.strs(3, 30, "-E", "lazy_itable_init=1", "-F", "-m 0")
		}
		spec.DiskSetup.Filesystems = append(spec.DiskSetup.Filesystems, f)
	}
}

// mounts draws spec.mounts: first field a diskSetup label, a device path or
// anything else; one to seven fields.
func (g *gen) mounts(spec *bootstrapv1.KubeadmConfigSpec) {
	var labels []string
	for _, f := range spec.DiskSetup.Filesystems {
		if f.Label != "" {
			labels = append(labels, f.Label)
		}
	}
	for i, n := 0, g.r.IntN(4); i < n; i++ {
		var first string
		switch {
		case len(labels) > 0 && g.chance(50):
			first = g.pick(labels...)
		case g.chance(50):
			first = g.pick("LABEL=data", "/dev/sdb1", "UUID=1234-ABCD", "etcd_disk", "ephemeral0", "swap", "/dev/disk/azure/resource-part1", "tmpfs")
		default:
			first = g.val(80, "none", "/dev/sdc1")
		}
		m := bootstrapv1.MountPoints{first}
		if !g.spicy(5) {
			m = append(m, g.val(25, g.ordinary(4, fmt.Sprintf("/mnt/m%d", i), fmt.Sprintf("/var/lib/m-%d", i), "/var/lib/etcd", "/mnt/a b", "none", "c:/mnt", "rel/mnt")...))
		}
		if len(m) == 2 && g.chance(60) {
			m = append(m, g.val(15, "ext4", "xfs", "auto", "swap", "tmpfs"))
			m = append(m, g.strs(4, 25, "defaults,nofail", "defaults", "x-systemd.requires=cloud-init.service", "0", "2", "comment=cloudconfig")...)
		}
		spec.Mounts = append(spec.Mounts, m)
	}
}

func (g *gen) spec(s *scenario) {
	spec := &s.config.Spec
	for i, n := 0, g.r.IntN(6); i < n; i++ {
		spec.Files = append(spec.Files, g.file(s, i, false))
	}
	for i, n := 0, g.r.IntN(4); i < n; i++ {
		spec.Users = append(spec.Users, g.user(s, i))
	}
	if g.chance(40) {
		g.ntp(spec)
	}
	if g.chance(35) {
		g.disks(spec, false)
	}
	g.mounts(spec)
	spec.BootCommands = g.commands(3)
	spec.PreKubeadmCommands = g.commands(4)
	spec.PostKubeadmCommands = g.commands(4)
	if g.chance(40) {
		spec.Verbosity = ptr.To(int32(g.r.IntN(11)))
	}
	g.kubeadm(s)
}

func (g *gen) nodeRegistration(n *bootstrapv1.NodeRegistrationOptions) {
	if g.chance(50) {
		n.Name = g.val(30, "'{{ ds.meta_data.local_hostname }}'", "{{ ds.meta_data.local_hostname }}", "node-0", "{{ v1.local_hostname }}")
	}
	if g.chance(30) {
		n.CRISocket = g.pick("unix:///var/run/containerd/containerd.sock", "npipe:////./pipe/containerd-containerd")
	}
	switch g.r.IntN(3) {
	case 0:
		n.Taints = &[]corev1.Taint{}
	case 1:
		n.Taints = &[]corev1.Taint{{Key: "dedicated", Value: g.val(30, "gpu"), Effect: corev1.TaintEffectNoSchedule}}
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
	if g.chance(20) {
		cc.EncryptionAlgorithm = bootstrapv1.EncryptionAlgorithmType(g.pick("ECDSA-P256", "ECDSA-P384", "RSA-2048", "RSA-3072", "RSA-4096"))
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
		g.discovery(s, &j.Discovery)
	}
}

// discovery draws kubeadm join discovery: a discovery file (with or without
// a kubeconfig CABPK writes), or a bootstrap token, preset or left for
// CABPK to create in the workload cluster.
func (g *gen) discovery(s *scenario, d *bootstrapv1.Discovery) {
	if g.chance(25) {
		d.File.KubeConfigPath = g.val(25, g.ordinary(2, "/tmp/discovery.kubeconfig", "/etc/kubernetes/discovery.yaml", "c:/k/discovery.kubeconfig",
			`C:\k\discovery.kubeconfig`, "relative.kubeconfig", "https://example.com/kubeconfig")...)
		if g.chance(25) {
			return // kubeadm reads a file or URL CABPK does not write
		}
		kc := &d.File.KubeConfig
		kc.Cluster.Server = g.opt(40, 30, "https://10.0.0.100:6443", "https://api.example.internal", "https://[fd00::1]:443")
		if g.chance(30) {
			kc.Cluster.CertificateAuthorityData = []byte(g.pick("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "raw ca bytes", "\x00\xff"))
		}
		kc.Cluster.TLSServerName = g.opt(30, 40, "api.example.internal", "kubernetes")
		if g.chance(30) {
			kc.Cluster.InsecureSkipTLSVerify = g.optBool()
		}
		kc.Cluster.ProxyURL = g.opt(20, 30, "http://proxy.example:3128", "socks5://10.0.0.1:1080")
		if g.chance(40) {
			ap := &kc.User.AuthProvider
			ap.Name = g.val(30, "oidc", "gcp", "azure")
			if g.chance(70) {
				ap.Config = map[string]string{}
				for k, n := 0, 1+g.r.IntN(3); k < n; k++ {
					ap.Config[g.val(30, "client-id", "idp-issuer-url", "id-token", "extra-scopes")] = g.val(50, "value", "https://issuer.example")
				}
			}
			return
		}
		e := &kc.User.Exec
		e.Command = g.val(25, "/usr/bin/auth", "aws-iam-authenticator", `C:\k\auth.exe`, "kubectl-oidc")
		e.Args = g.strs(3, 40, "token", "-i", "cluster-0", "--flag=value")
		for k, n := 0, g.r.IntN(3); k < n; k++ {
			e.Env = append(e.Env, bootstrapv1.KubeConfigAuthExecEnv{Name: g.val(30, "AWS_PROFILE", "HOME", "PATH"), Value: g.val(50, "default", "/root")})
		}
		e.APIVersion = g.opt(40, 20, "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
		if g.chance(40) {
			e.ProvideClusterInfo = g.optBool()
		}
		return
	}
	bt := &d.BootstrapToken
	if g.chance(60) {
		bt.Token = "abcdef.0123456789abcdef"
	}
	// else: no token, CABPK creates one in the workload cluster
	if g.chance(20) {
		bt.APIServerEndpoint = g.pick("lb.example.internal:6443", "[fd00::1]:6443", "10.0.0.100:443")
	}
	if g.chance(10) {
		bt.CACertHashes = []string{"sha256:0000000000000000000000000000000000000000000000000000000000000000"}
	}
	if g.chance(10) {
		bt.UnsafeSkipCAVerification = g.optBool()
	}
}
