package differential

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// warningLine is the CLI's one line per problem: object, field path, message.
var warningLine = regexp.MustCompile(`^warning: KubeadmConfig [^ /]+/[^ :]+: spec\.[^:]+: .+$`)

// TestCLIRendersCABPKBytes runs the nodeboot binary, as an operator would,
// on objects CABPK renders with hazards: a Windows worker, YAML-breaking
// and injecting values, legacy Ignition fields CABPK drops or inverts.
// Standard output is CABPK's reconciler's bytes; standard error has one
// warning line per problem, naming the field, never the value. With
// --strict the same problems are errors and nothing is rendered.
func TestCLIRendersCABPKBytes(t *testing.T) {
	enableGates(t)
	bin := filepath.Join(t.TempDir(), "nodeboot")
	build := exec.Command("go", "build", "-o", bin, "./cmd/nodeboot")
	build.Dir = testenv.ModuleRoot()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())

	type input struct {
		name, secret string // secret: a value that must not reach stderr
		format       bootstrapv1.Format
		set          func(*bootstrapv1.KubeadmConfigSpec)
	}
	inputs := []input{
		{"windows", "", bootstrapv1.CloudConfig, func(s *bootstrapv1.KubeadmConfigSpec) {
			s.Files = []bootstrapv1.File{{Path: "c:/k/azure.json", Content: "{}\n"}, {Path: `C:\k\node.json`, Content: "x\n", Permissions: "0644"}}
			s.PreKubeadmCommands = []string{"powershell C:/k/prepare.ps1"}
		}},
		{"sudo", "NOPASSWD", bootstrapv1.CloudConfig, func(s *bootstrapv1.KubeadmConfigSpec) { s.Users[0].Sudo = "ALL=(ALL) NOPASSWD: ALL" }},
		{"gecos", "on-call", bootstrapv1.CloudConfig, func(s *bootstrapv1.KubeadmConfigSpec) { s.Users[0].Gecos = "Ops: on-call #2" }},
		{"passwd-injection", "evil", bootstrapv1.CloudConfig, func(s *bootstrapv1.KubeadmConfigSpec) { s.Users[0].Passwd = "$6$x\n  - name: evil\n    sudo: ALL" }},
		{"ntp-injection", "reboot", bootstrapv1.CloudConfig, func(s *bootstrapv1.KubeadmConfigSpec) {
			s.NTP = bootstrapv1.NTP{Servers: []string{"pool.ntp.org\nruncmd: [reboot]"}}
		}},
		{"empty-fs-setup", "", bootstrapv1.CloudConfig, func(s *bootstrapv1.KubeadmConfigSpec) {
			s.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "/dev/sdb", Layout: ptr.To(true)}}
		}},
		{"legacy-ntp-disabled", "", bootstrapv1.Ignition, func(s *bootstrapv1.KubeadmConfigSpec) {
			s.NTP = bootstrapv1.NTP{Enabled: ptr.To(false), Servers: []string{"time.example.com"}}
		}},
		{"legacy-device-mount", "", bootstrapv1.Ignition, func(s *bootstrapv1.KubeadmConfigSpec) {
			s.Mounts = []bootstrapv1.MountPoints{{"/dev/sdc1", "/var/lib/x"}}
		}},
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			s := probeScenario(in.format, probeField{name: "cli"})
			s.config.Spec.Format = in.format
			in.set(&s.config.Spec)
			objs := objects(t, s, certs)
			want := cabpk(t, s, objs)
			require.NoError(t, want.err, "CABPK renders it")
			var docs [][]byte
			for _, o := range objs {
				gvk, err := apiutil.GVKForObject(o, scheme)
				require.NoError(t, err)
				o = o.DeepCopyObject().(client.Object)
				o.GetObjectKind().SetGroupVersionKind(gvk)
				b, err := yaml.Marshal(o)
				require.NoError(t, err)
				docs = append(docs, b)
			}
			file := filepath.Join(t.TempDir(), "objects.yaml")
			require.NoError(t, os.WriteFile(file, bytes.Join(docs, []byte("---\n")), 0o600))
			cmd := exec.Command(bin, "render", "-f", file, "--name", s.config.Name)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
			require.Equal(t, string(want.data), stdout.String(), "standard output is CABPK's bytes")
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if in.name == "windows" {
				require.Empty(t, strings.TrimSpace(stderr.String()), "Windows paths are not a hazard for cloudbase-init")
				return
			}
			require.NotEmpty(t, lines)
			for _, l := range lines {
				require.Regexp(t, warningLine, l)
				if in.secret != "" {
					require.NotContains(t, l, in.secret, "a warning quotes the value")
				}
			}
			t.Logf("stderr:\n%s", stderr.String())

			// --strict: the same warnings as errors, exit 1, nothing on stdout.
			strict := exec.Command(bin, "render", "-f", file, "--name", s.config.Name, "--strict")
			stdout.Reset()
			var serr bytes.Buffer
			strict.Stdout, strict.Stderr = &stdout, &serr
			err := strict.Run()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			require.Equal(t, 1, exit.ExitCode())
			require.Empty(t, stdout.String())
			require.Len(t, strings.Split(strings.TrimSpace(serr.String()), "\n"), len(lines), "one error per warning:\n%s", serr.String())
			require.Contains(t, serr.String(), "(nodeboot.dev/strict)")
		})
	}
}
