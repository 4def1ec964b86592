package ignition

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

func matrixPlan() *provisioning.Plan {
	return &provisioning.Plan{
		Role:     provisioning.RoleJoinWorker,
		Sentinel: "/run/cluster-api/bootstrap-success.complete",
		Files: []provisioning.File{
			{Path: "/etc/app.conf", Permissions: "0644", Content: "app\n", Origin: provisioning.NewPath("spec", "files").Index(0)},
			{Path: "/etc/kubeadm.yml", Permissions: "0600", Content: "---\nkind: JoinConfiguration\n", BootstrapInput: true},
		},
		Commands: []provisioning.Command{{Phase: provisioning.PhaseBootstrap, Script: "kubeadm join --config /etc/kubeadm.yml "}},
	}
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func gzipped(s string) string {
	var b strings.Builder
	z := newGzip(&b)
	_, _ = z.Write([]byte(s))
	_ = z.Close()
	return b.String()
}

func disks(parts []provisioning.Partition, fss ...provisioning.Filesystem) func(p *provisioning.Plan) {
	return func(p *provisioning.Plan) { p.Disks = &provisioning.DiskSetup{Partitions: parts, Filesystems: fss} }
}

var fsEtcd = provisioning.Filesystem{Device: "/dev/sdb1", Filesystem: "ext4", Label: "etcd", Overwrite: no(), ExtraOpts: []string{"-E", "lazy_itable_init=1"}}

// matrixFeatures are the Plans of docs/support-matrix.md, by feature id.
var matrixFeatures = map[string]func(p *provisioning.Plan){
	"file-plain": func(p *provisioning.Plan) {},
	"file-base64": func(p *provisioning.Plan) {
		p.Files[0].Encoding, p.Files[0].Content = provisioning.EncodingBase64, b64("app\n")
	},
	"file-gzip": func(p *provisioning.Plan) {
		p.Files[0].Encoding, p.Files[0].Content = provisioning.EncodingGzip, gzipped("app\n")
	},
	"file-gzip-base64": func(p *provisioning.Plan) {
		p.Files[0].Encoding, p.Files[0].Content = provisioning.EncodingGzipBase64, b64(gzipped("app\n"))
	},
	"file-append":  func(p *provisioning.Plan) { p.Files[0].Append = yes() },
	"file-owner":   func(p *provisioning.Plan) { p.Files[0].Owner = "root:root" },
	"file-windows": func(p *provisioning.Plan) { p.Files[0].Path = `C:\k\node.json` },
	"file-no-mode": func(p *provisioning.Plan) { p.Files[0].Permissions = "" },
	"user": func(p *provisioning.Plan) {
		p.Users = []provisioning.User{{Name: "capi", Gecos: "Cluster API", Groups: "adm, sudo", HomeDir: "/home/capi", Shell: "/bin/bash", SSHAuthorizedKeys: []string{"ssh-ed25519 AAAA k"}, Origin: provisioning.NewPath("spec", "users").Index(0)}}
	},
	"user-sudo": func(p *provisioning.Plan) {
		p.Users = []provisioning.User{{Name: "capi", Sudo: "ALL=(ALL) NOPASSWD:ALL"}}
	},
	"user-passwd-unlocked": func(p *provisioning.Plan) {
		p.Users = []provisioning.User{{Name: "capi", Passwd: "$6$s$h", LockPassword: no()}}
	},
	"user-passwd-locked": func(p *provisioning.Plan) { p.Users = []provisioning.User{{Name: "capi", Passwd: "$6$s$h"}} },
	"user-inactive":      func(p *provisioning.Plan) { p.Users = []provisioning.User{{Name: "capi", Inactive: yes()}} },
	"ntp-enabled": func(p *provisioning.Plan) {
		p.NTP = &provisioning.NTP{Enabled: yes(), Servers: []string{"time.example.com"}}
	},
	"ntp-disabled": func(p *provisioning.Plan) {
		p.NTP = &provisioning.NTP{Enabled: no(), Servers: []string{"time.example.com"}}
	},
	"disk-layout":               disks([]provisioning.Partition{{Device: "/dev/sdb", Layout: yes(), Overwrite: yes(), TableType: "gpt"}}),
	"disk-layout-false":         disks([]provisioning.Partition{{Device: "/dev/sdb", Layout: no()}}),
	"disk-mbr":                  disks([]provisioning.Partition{{Device: "/dev/sdb", Layout: yes(), TableType: "mbr"}}),
	"disk-layout-whole":         disks([]provisioning.Partition{{Device: "/dev/sdb", DiskLayout: []provisioning.PartitionSpec{{Percentage: 100, PartitionType: "Linux"}}}}),
	"disk-layout-split":         disks([]provisioning.Partition{{Device: "/dev/sdb", DiskLayout: []provisioning.PartitionSpec{{Percentage: 60}, {Percentage: 40}}}}),
	"filesystem":                disks(nil, fsEtcd),
	"filesystem-partition":      disks(nil, provisioning.Filesystem{Device: "/dev/sdb", Filesystem: "ext4", Label: "d", Partition: "1", Overwrite: no()}),
	"filesystem-partition-auto": disks(nil, provisioning.Filesystem{Device: "/dev/sdb", Filesystem: "ext4", Label: "d", Partition: "auto", Overwrite: no()}),
	"filesystem-replacefs":      disks(nil, provisioning.Filesystem{Device: "/dev/sdb", Filesystem: "ext4", Label: "d", ReplaceFS: "ntfs", Overwrite: no()}),
	"mount-label": func(p *provisioning.Plan) {
		disks(nil, fsEtcd)(p)
		p.Mounts = []provisioning.Mount{{"etcd", "/var/lib/etcd"}}
	},
	"mount-device":  func(p *provisioning.Plan) { p.Mounts = []provisioning.Mount{{"/dev/sdc1", "/data"}} },
	"mount-swap":    func(p *provisioning.Plan) { p.Mounts = []provisioning.Mount{{"/dev/sdc2", "none", "swap", "sw"}} },
	"boot-commands": func(p *provisioning.Plan) { p.BootCommands = []string{"echo boot"} },
	"commands": func(p *provisioning.Plan) {
		p.Commands = append([]provisioning.Command{{Phase: provisioning.PhasePre, Script: "echo pre"}}, append(p.Commands, provisioning.Command{Phase: provisioning.PhasePost, Script: "echo post"})...)
	},
	"unit": func(p *provisioning.Plan) {
		p.Units = []provisioning.Unit{{Name: "agent.service", Enabled: yes(), Contents: "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}}
	},
	"unit-dropins": func(p *provisioning.Plan) {
		p.Units = []provisioning.Unit{{Name: "containerd.service", DropIns: []provisioning.DropIn{{Name: "10-limits.conf", Contents: "[Service]\nLimitNOFILE=1048576\n"}}}}
	},
	"no-bootstrap-input": func(p *provisioning.Plan) { p.Files = p.Files[:1]; p.Commands[0].Script = "k3s agent" },
}

var matrixRow = regexp.MustCompile("^\\| `([a-z0-9-]+)`:[^|]*\\| (yes|warn|no)\\b[^|]*\\| (yes|warn|no)\\b[^|]*\\| (yes|warn|no)\\b[^|]*\\|$")

// TestSupportMatrix checks every cell of docs/support-matrix.md.
func TestSupportMatrix(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "docs", "support-matrix.md"))
	require.NoError(t, err)
	columns := []struct {
		format, version string
	}{{"cloud-config", provisioning.VersionCABPK}, {ignition.Format, provisioning.VersionCABPK}, {ignition.Format, "3.4.0"}}
	// Every column renders the base plan, so a "no" cell's error comes from
	// the row's feature and nothing else.
	for _, col := range columns {
		prov, err := provisioning.Get(col.format)
		require.NoError(t, err)
		_, err = prov.Render(matrixPlan(), provisioning.Options{Version: col.version})
		require.NoError(t, err, "base plan in %s %s", col.format, col.version)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := matrixRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		change, ok := matrixFeatures[m[1]]
		require.True(t, ok, "feature %s has no Plan in the test", m[1])
		seen[m[1]] = true
		for i, col := range columns {
			want := m[2+i]
			t.Run(m[1]+"/"+col.format+col.version, func(t *testing.T) {
				p := matrixPlan()
				change(p)
				prov, err := provisioning.Get(col.format)
				require.NoError(t, err)
				opts := provisioning.Options{Version: col.version}
				out, err := prov.Render(p, opts)
				switch want {
				case "no":
					require.Error(t, err)
					require.NotEmpty(t, prov.Check(p, opts).Errors())
				case "warn":
					require.NoError(t, err)
					require.NotEmpty(t, out.Warnings)
				default:
					require.NoError(t, err)
					require.Empty(t, out.Warnings)
				}
			})
		}
	}
	require.Len(t, seen, len(matrixFeatures), "every feature of the test is a row of the document")
}

// TestSpecVersionsValidate checks the spec table: each version's output passes
// upstream ignition-validate pinned to that spec, and not to the one before.
func TestSpecVersionsValidate(t *testing.T) {
	tool := testenv.Tool(t, "ignition-validate")
	dir := filepath.Join(testenv.VectorsDir(t), "cc-init-all-features-v1.35")
	prev := map[string]string{"3.4.0": "3.3.0", "3.5.0": "3.4.0"}
	for _, version := range ignition.Versions[1:] {
		t.Run(version, func(t *testing.T) {
			out, err := buildWith(t, dir, version, v3Buildable).Render()
			require.NoError(t, err)
			file := filepath.Join(t.TempDir(), "config.ign")
			require.NoError(t, os.WriteFile(file, out.Data, 0o600))
			res, err := exec.Command(tool, "--spec", version, file).CombinedOutput()
			require.NoError(t, err, "%s", res)
			if p, ok := prev[version]; ok {
				res, err = exec.Command(tool, "--spec", p, file).CombinedOutput()
				require.Error(t, err, "%s", res)
			}
		})
	}
}
