package differential

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/nodeboot/nodeboot/bootstrap"
)

// probeField sets one string field of a minimal spec.
type probeField struct {
	name string
	set  func(*bootstrapv1.KubeadmConfigSpec, string)
	// extra values drawn for this field besides the special ones.
	extra []string
	// cloudConfigOnly: the webhook forbids the field with Ignition.
	cloudConfigOnly bool
}

var probeFields = []probeField{
	{name: "files[0].path", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Files[0].Path = x }, extra: paths},
	{name: "files[0].owner", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Files[0].Owner = x }, extra: owners},
	{name: "files[0].permissions", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Files[0].Permissions = x }, extra: permissions},
	{name: "files[0].content", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Files[0].Content = x }, extra: contents},
	{name: "users[0].name", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].Name = x }, extra: []string{"a/b", "../etc/x", "x/..", "..", "."}},
	{name: "users[0].gecos", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].Gecos = x }},
	{name: "users[0].groups", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].Groups = x }, extra: []string{", leading", "trailing, ", "a,,b", "a, , b", "a,b"}},
	{name: "users[0].homeDir", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].HomeDir = x }, extra: paths},
	{name: "users[0].shell", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].Shell = x }},
	{name: "users[0].passwd", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].Passwd = x }},
	{name: "users[0].primaryGroup", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].PrimaryGroup = x }},
	{name: "users[0].sudo", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].Sudo = x }, extra: []string{"ALL=(ALL) NOPASSWD: ALL"}},
	{name: "users[0].sshAuthorizedKeys[0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Users[0].SSHAuthorizedKeys = []string{x} }},
	{name: "ntp.servers[0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.NTP.Servers = []string{x} }},
	{name: "diskSetup.partitions[0].device", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Partitions[0].Device = x }, extra: paths},
	{name: "diskSetup.filesystems[0].label", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Filesystems[0].Label = x }},
	{name: "diskSetup.filesystems[0].filesystem", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Filesystems[0].Filesystem = x }},
	{name: "diskSetup.filesystems[0].device", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Filesystems[0].Device = x }},
	{name: "diskSetup.filesystems[0].partition", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Filesystems[0].Partition = x }, cloudConfigOnly: true},
	{name: "diskSetup.filesystems[0].replaceFS", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Filesystems[0].ReplaceFS = x }, cloudConfigOnly: true},
	{name: "diskSetup.filesystems[0].extraOpts[0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.DiskSetup.Filesystems[0].ExtraOpts = []string{x} }},
	{name: "mounts[0][0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Mounts[0][0] = x }},
	{name: "mounts[0][1]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Mounts[0][1] = x }, extra: paths},
	{name: "mounts[0][2]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.Mounts[0][2] = x }},
	{name: "bootCommands[0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.BootCommands = []string{x} }, extra: commands, cloudConfigOnly: true},
	{name: "preKubeadmCommands[0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.PreKubeadmCommands = []string{x} }, extra: commands},
	{name: "postKubeadmCommands[0]", set: func(s *bootstrapv1.KubeadmConfigSpec, x string) { s.PostKubeadmCommands = []string{x} }, extra: commands},
}

// TestSingleFieldProbes is the exhaustive complement of the random
// differentials: a minimal worker config with exactly one string field set
// to one YAML-special value (or one of the field's own awkward values), for
// every field CABPK writes and every value, in both of CABPK's formats. A
// failure is its own minimal reproducer: the subtest names the field and
// the value's index in the pool, the message shows the value.
func TestSingleFieldProbes(t *testing.T) {
	t.Parallel()
	enableGates(t)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	v, err := loadCRDValidator()
	require.NoError(t, err)
	for _, format := range []bootstrapv1.Format{bootstrapv1.CloudConfig, bootstrapv1.Ignition} {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			fails := &failures{}
			counts := &tally{}
			probes, excluded := 0, 0
			var mu sync.Mutex
			var docs []probeDoc
			for _, f := range probeFields {
				if f.cloudConfigOnly && format == bootstrapv1.Ignition {
					continue
				}
				for i, x := range uniqueValues(special, f.extra) {
					s := probeScenario(format, f)
					f.set(&s.config.Spec, x)
					if len(v.validate(s.config)) > 0 || len(admission.Validate(&s.config.Spec, false, field.NewPath("spec"))) > 0 {
						excluded++
						continue
					}
					probes++
					t.Run(fmt.Sprintf("%s/%03d", f.name, i), func(t *testing.T) {
						objs := objects(t, s, certs)
						want := cabpk(t, s, objs)
						res, got, gotErr := nodeboot(s, objs, want.token, nil)
						o, d := classify(want, got, gotErr, format)
						counts.add(f.name+"="+strconv.Quote(x), o, want.err == nil)
						if d != "" {
							fails.add(f.name+"="+strconv.Quote(x), d)
							t.Errorf("spec.%s = %q: %s", f.name, x, d)
						}
						if format != bootstrapv1.CloudConfig || gotErr != nil {
							return
						}
						plain := probeDoc{field: f.name, value: x, data: got, warned: warnedAt(res, "spec."+f.name)}
						if out, err := res.Render(); err == nil && len(x) >= 5 {
							for _, w := range out.Warnings {
								// The value may come from a Secret (passwdFrom).
								require.NotContains(t, w.Message, x, "a warning quotes the value of spec.%s", f.name)
							}
						}
						cres, cdata, cerr := nodeboot(s, objs, want.token, map[string]string{bootstrap.AnnotationCloudInitCorrections: "true"})
						if cerr != nil {
							// Corrections refuse what no YAML can carry; CABPK's
							// bytes then must have had a warning there.
							if !plain.warned {
								t.Errorf("spec.%s = %q: corrections refuse it (%v) without a warning on the default output", f.name, x, cerr)
							}
							return
						}
						mu.Lock()
						docs = append(docs, plain, probeDoc{field: f.name, value: x, data: cdata, warned: warnedAt(cres, "spec."+f.name), corrected: true})
						mu.Unlock()
					})
				}
			}
			if format == bootstrapv1.CloudConfig {
				missed, wrong := judgeProbes(t, docs)
				t.Logf("cloud-init judged %d probe documents: %d hazards without a warning, %d corrected documents that do not read back as declared", len(docs), missed, wrong)
			}
			fails.log(t, string(format)+" single-field probes", probes)
			t.Logf("%d probes excluded as CRD- or webhook-invalid", excluded)
			counts.log(t, string(format)+" single-field probes")
			// Every special value in every field: most of them break CABPK's
			// legacy Ignition, so the floor is what they render today.
			counts.require(t, string(format)+" single-field probes", map[bootstrapv1.Format]int{bootstrapv1.CloudConfig: 90, bootstrapv1.Ignition: 60}[format])
		})
	}
}

// probeScenario is the minimal worker around a probed field.
func probeScenario(format bootstrapv1.Format, f probeField) *scenario {
	g := &gen{r: rand.New(rand.NewPCG(1, 1))}
	s := g.scenario(2, format) // a worker
	spec := &s.config.Spec
	spec.Files = []bootstrapv1.File{{Path: "/etc/x", Permissions: "0644", Content: "x\n"}}
	spec.Users = []bootstrapv1.User{{Name: "u"}}
	spec.JoinConfiguration.Discovery.BootstrapToken.Token = "abcdef.0123456789abcdef"
	if strings.HasPrefix(f.name, "ntp") {
		spec.NTP.Enabled = ptr.To(true)
	}
	if strings.HasPrefix(f.name, "diskSetup") || strings.HasPrefix(f.name, "mounts") {
		spec.DiskSetup.Partitions = []bootstrapv1.Partition{{Device: "/dev/sdb", Layout: ptr.To(true)}}
		spec.DiskSetup.Filesystems = []bootstrapv1.Filesystem{{Device: "/dev/sdb1", Filesystem: "ext4", Label: "data", Overwrite: ptr.To(false)}}
		spec.Mounts = []bootstrapv1.MountPoints{{"data", "/mnt/data", "defaults"}}
	}
	return s
}

func uniqueValues(pools ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pools {
		for _, x := range p {
			if x != "" && !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Strings(out)
	return out
}

// warnedAt reports whether the rendering warned at path or inside it.
func warnedAt(res *bootstrap.Result, path string) bool {
	if res == nil {
		return false
	}
	out, err := res.Render()
	if err != nil {
		return false
	}
	for _, w := range out.Warnings {
		if s := w.Path.String(); s == path || strings.HasPrefix(s, path+".") || strings.HasPrefix(s, path+"[") {
			return true
		}
	}
	return false
}
