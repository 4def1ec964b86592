package ignition

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	cabpk "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	"sigs.k8s.io/cluster-api/feature"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/internal/testenv"
	"github.com/nodeboot/nodeboot/provisioning"
)

// Pools the generator draws from: ordinary values and the ones CABPK's
// YAML layout reads differently (comments, quotes, indentation, CRLF,
// decimal modes), so the legacy readings are compared with the real thing.
var (
	genContents = []string{"", "a", "plain line\n", "two\nlines\n", "trailing\n\n\n", "  indented\n  block\n",
		"first\n  second indented\n", "tab\tinside\n\tleading tab\n", "# comment\nkey: value\n", "unicode é ✓\n",
		"crlf\r\nline\r\n", "spaces at end   \n", "{{ not a template }}\n", "  \n  after blank\n", "x: [1, 2]\n", "   "}
	genCommands = []string{"echo hello", "echo \"quoted\" > /tmp/q", "if true; then\n  echo multi\nfi\n", "  leading space",
		"systemctl restart containerd", "echo 'single'", "cat <<EOF\nheredoc\nEOF", "trailing\n\n", "a # comment", ""}
	genScalars = []string{"plain", "Admin User", "user #1", "'quoted'", "\"double\"", "with: colon", "~", "0644", "true", "a-b_c.d"}
	genModes   = []string{"0644", "0600", "0755", "0640", "0400", "644", "755"}
	genOwners  = []string{"", "root", "root:root", "core", "core:core", ":root", "root:"}
	genKeys    = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKey one@example", "ssh-rsa AAAAB3NzaC1yc2E two", "ssh-ed25519 AAAA three # note"}
	genSudo    = []string{"", "ALL=(ALL) NOPASSWD:ALL", "ALL=(ALL) ALL"}
	genCLC     = []string{"",
		"storage:\n  files:\n  - path: /etc/extra\n    filesystem: root\n    mode: 0644\n    contents:\n      inline: extra\n",
		"systemd:\n  units:\n  - name: kubeadm.service\n    dropins:\n    - name: 10-x.conf\n      contents: |\n        [Unit]\n        After=x.service\n",
		"passwd:\n  users:\n  - name: extra\n    ssh_authorized_keys:\n    - ssh-ed25519 AAAA extra\n",
		"storage:\n  files:\n  - path: /etc/nomode\n    filesystem: root\n    contents:\n      inline: x\n"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// genSpec fills the OS half of a KubeadmConfig spec with what CABPK's
// ignition webhook allows.
func genSpec(r *rand.Rand, spec *bootstrapv1.KubeadmConfigSpec) {
	for i := range r.IntN(5) {
		f := bootstrapv1.File{Path: fmt.Sprintf("/etc/gen/f%d.conf", i), Permissions: pick(r, genModes), Owner: pick(r, genOwners), Content: pick(r, genContents)}
		if r.IntN(4) == 0 {
			f.Encoding = bootstrapv1.Base64
			f.Content = b64(pick(r, genContents))
		}
		if r.IntN(5) == 0 {
			f.Append = ptr.To(r.IntN(2) == 0)
		}
		spec.Files = append(spec.Files, f)
	}
	for i := range r.IntN(4) {
		u := bootstrapv1.User{Name: fmt.Sprintf("user%d", i), Gecos: pick(r, append(genScalars, "")), HomeDir: pick(r, []string{"", "/home/x"}),
			Shell: pick(r, []string{"", "/bin/bash"}), PrimaryGroup: pick(r, []string{"", "users"}), Sudo: pick(r, genSudo),
			Groups: pick(r, []string{"", "wheel", "adm, sudo", "a,b"})}
		if r.IntN(3) == 0 {
			u.LockPassword = ptr.To(false)
			u.Passwd = pick(r, []string{"$6$salt$hash", "~", "x #y"})
		} else if r.IntN(2) == 0 {
			u.LockPassword = ptr.To(true)
		}
		if r.IntN(3) == 0 {
			u.Inactive = ptr.To(false)
		}
		for range r.IntN(3) {
			u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, pick(r, genKeys))
		}
		spec.Users = append(spec.Users, u)
	}
	if r.IntN(3) == 0 {
		spec.NTP = bootstrapv1.NTP{Enabled: ptr.To(true), Servers: []string{"time.example.com", "10.0.0.1"}[:r.IntN(3)]}
	}
	var labels []string
	for i := range r.IntN(3) {
		spec.DiskSetup.Partitions = append(spec.DiskSetup.Partitions, bootstrapv1.Partition{Device: fmt.Sprintf("/dev/sd%c", 'b'+i),
			Layout: pick(r, []*bool{nil, ptr.To(true)}), Overwrite: pick(r, []*bool{nil, ptr.To(true), ptr.To(false)}), TableType: pick(r, []string{"", "gpt"})})
	}
	for i := range r.IntN(3) {
		label := fmt.Sprintf("disk%d", i)
		labels = append(labels, label)
		spec.DiskSetup.Filesystems = append(spec.DiskSetup.Filesystems, bootstrapv1.Filesystem{Device: fmt.Sprintf("/dev/sd%c1", 'b'+i),
			Filesystem: pick(r, []string{"ext4", "xfs"}), Label: label, Overwrite: ptr.To(r.IntN(2) == 0),
			ExtraOpts: []string{"-E", "lazy_itable_init=1"}[:r.IntN(3)]})
	}
	for i := range labels {
		if r.IntN(2) == 0 {
			spec.Mounts = append(spec.Mounts, append(bootstrapv1.MountPoints{labels[i], fmt.Sprintf("/var/lib/m%d", i)}, []string{"defaults", "nofail"}[:r.IntN(3)]...))
		}
	}
	for range r.IntN(4) {
		spec.PreKubeadmCommands = append(spec.PreKubeadmCommands, pick(r, genCommands))
	}
	for range r.IntN(4) {
		spec.PostKubeadmCommands = append(spec.PostKubeadmCommands, pick(r, genCommands))
	}
	if r.IntN(2) == 0 {
		spec.Verbosity = ptr.To(int32(r.IntN(6)))
	}
	if clc := pick(r, genCLC); clc != "" {
		spec.Ignition.ContainerLinuxConfig = bootstrapv1.ContainerLinuxConfig{AdditionalConfig: clc, Strict: ptr.To(r.IntN(2) == 0)}
	}
}

// cabpkRender renders res's Plan inputs with CABPK's own pkg/ignition: the
// spec's OS half as CABPK's reconciler passes it, the Plan's resolved files
// (certificates, spec.files, discovery kubeconfig) as its write_files.
func cabpkRender(res *bootstrap.Result) ([]byte, error) {
	spec := &res.Config.Spec
	var files []bootstrapv1.File
	kubeadmConfig := ""
	for _, f := range res.Plan.Files {
		if f.BootstrapInput {
			kubeadmConfig = strings.TrimPrefix(f.Content, "---\n")
			continue
		}
		files = append(files, bootstrapv1.File{Path: f.Path, Owner: f.Owner, Permissions: f.Permissions, Encoding: bootstrapv1.Encoding(f.Encoding), Append: f.Append, Content: f.Content})
	}
	base := cloudinit.BaseUserData{AdditionalFiles: files, PreKubeadmCommands: spec.PreKubeadmCommands, PostKubeadmCommands: spec.PostKubeadmCommands,
		Users: spec.Users, Mounts: spec.Mounts, BootCommands: spec.BootCommands}
	if spec.NTP.IsDefined() {
		base.NTP = &spec.NTP
	}
	if spec.DiskSetup.IsDefined() {
		base.DiskSetup = &spec.DiskSetup
	}
	if spec.Verbosity != nil {
		base.KubeadmVerbosity = fmt.Sprintf("--v %d", *spec.Verbosity)
	}
	ign := &spec.Ignition
	switch res.Plan.Role {
	case provisioning.RoleInit:
		cc, ic, _ := strings.Cut(kubeadmConfig, "\n---\n")
		out, _, err := cabpk.NewInitControlPlane(&cabpk.ControlPlaneInput{ControlPlaneInput: &cloudinit.ControlPlaneInput{BaseUserData: base, ClusterConfiguration: cc, InitConfiguration: ic}, Ignition: ign})
		return out, err
	case provisioning.RoleJoinControlPlane:
		out, _, err := cabpk.NewJoinControlPlane(&cabpk.ControlPlaneJoinInput{ControlPlaneJoinInput: &cloudinit.ControlPlaneJoinInput{BaseUserData: base, JoinConfiguration: kubeadmConfig}, Ignition: ign})
		return out, err
	default:
		out, _, err := cabpk.NewNode(&cabpk.NodeInput{NodeInput: &cloudinit.NodeInput{BaseUserData: base, JoinConfiguration: kubeadmConfig}, Ignition: ign})
		return out, err
	}
}

// TestDifferentialCABPK generates ignition-format KubeadmConfigs with a fixed
// seed, keeps those CABPK's webhook and renderer accept, and requires
// nodeboot's legacy output to be byte-identical to CABPK's.
func TestDifferentialCABPK(t *testing.T) {
	require.NoError(t, feature.MutableGates.Set(string(feature.KubeadmBootstrapFormatIgnition)+"=true"))
	bases := []string{"ign-init-minimal-v1.33", "ign-join-cp-v1.30", "ign-join-worker-minimal-v1.33", "ign-join-worker-machinepool-v1.31"}
	r := rand.New(rand.NewPCG(2026, 1))
	accepted, cabpkFailed := 0, 0
	for i := 0; i < 320; i++ {
		base := filepath.Join(testenv.VectorsDir(t), bases[i%len(bases)])
		var spec *bootstrapv1.KubeadmConfigSpec
		res := buildWith(t, base, "", func(c *bootstrapv1.KubeadmConfig) {
			c.Spec.Files, c.Spec.Users, c.Spec.PreKubeadmCommands, c.Spec.PostKubeadmCommands = nil, nil, nil, nil
			genSpec(r, &c.Spec)
			delete(c.Annotations, bootstrap.AnnotationIgnitionVersion)
			spec = &c.Spec
		})
		require.Empty(t, admission.Validate(spec, false, field.NewPath("spec")), "case %d: generator made a spec CABPK's webhook rejects", i)
		want, cabpkErr := cabpkRender(res)
		out, err := res.Render()
		if cabpkErr != nil {
			// What CABPK cannot render, nodeboot refuses too, with a reason.
			cabpkFailed++
			require.Error(t, err, "case %d: CABPK fails (%v) but nodeboot rendered it", i, cabpkErr)
			continue
		}
		accepted++
		require.NoError(t, err, "case %d: CABPK renders it", i)
		if string(want) != string(out.Data) {
			require.Equal(t, string(want), string(out.Data), "case %d", i)
		}
	}
	t.Logf("%d generated configs rendered identically, %d rejected by CABPK's renderer", accepted, cabpkFailed)
	require.GreaterOrEqual(t, accepted, 200)
}
