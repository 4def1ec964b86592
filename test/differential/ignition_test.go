package differential

import (
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
)

// CLC snippets for spec.ignition.containerLinuxConfig.additionalConfig:
// valid ones, ones the transpiler warns about (which strict: true turns into
// CABPK's error), and ones it cannot parse at all.
var clcs = []string{
	"storage:\n  files:\n  - path: /etc/extra\n    filesystem: root\n    mode: 0644\n    contents:\n      inline: extra\n",
	"systemd:\n  units:\n  - name: kubeadm.service\n    dropins:\n    - name: 10-x.conf\n      contents: |\n        [Unit]\n        After=x.service\n",
	"passwd:\n  users:\n  - name: extra\n    ssh_authorized_keys:\n    - ssh-ed25519 AAAA extra\n",
	"systemd:\n  units:\n  - name: x.service\n    enabled: true\n    contents: |\n      [Service]\n      ExecStart=/bin/true\n",
	"storage:\n  files:\n  - path: /etc/nomode\n    filesystem: root\n    contents:\n      inline: x\n",
	"storage:\n  files:\n  - path: relative\n    filesystem: root\n    contents:\n      inline: x\n",
	"unknown_key: 1\n",
	"storage:\n  files:\n  - path: /etc/x\n    filesystem: root\n    mode: 644\n    contents:\n      inline: x\n",
	"passwd:\n  users:\n  - name: core\n    password_hash: x\n    unknown: y\n",
	"not: [valid\n",
	"- a list\n",
	"{\"ignition\": {\"version\": \"2.3.0\"}}",
	"networkd:\n  units:\n  - name: 00-eth0.network\n    contents: |\n      [Match]\n      Name=eth0\n",
	"etcd:\n  version: 3.5.0\n",
	"storage:\n  filesystems:\n  - name: data\n    mount:\n      device: /dev/sdb\n      format: ext4\n",
	"#just a comment\n",
	"yes",
	"locksmith:\n  reboot_strategy: off\n",
}

// ignitionSpec fills the OS half of a format: ignition KubeadmConfig with
// what CABPK's webhook allows there (no bootCommands, no gzip, no inactive
// users, gpt only, no replaceFS or partition) and the CRD allows.
func (g *gen) ignitionSpec(s *scenario) {
	// CABPK's generated CLC is transpiled strictly, so one YAML-special value
	// anywhere makes it fail; most scenarios keep to ordinary values so that
	// enough render for the bytes to be compared.
	g.spice = []int{0, 0, 0, 0, 5, 10, 20, 100}[g.r.IntN(8)]
	if g.safe {
		g.spice = []int{0, 0, 0, 0, 0, 0, 2, 5}[g.r.IntN(8)]
	}
	spec := &s.config.Spec
	for i, n := 0, g.r.IntN(6); i < n; i++ {
		spec.Files = append(spec.Files, g.file(s, i, true))
	}
	for i, n := 0, g.r.IntN(4); i < n; i++ {
		u := g.user(s, i)
		if u.Inactive != nil && *u.Inactive {
			u.Inactive = ptr.To(false)
		}
		spec.Users = append(spec.Users, u)
	}
	if g.chance(45) {
		g.ntp(spec)
	}
	if g.chance(40) {
		g.disks(spec, true)
	}
	g.mounts(spec)
	spec.PreKubeadmCommands = g.commands(4)
	spec.PostKubeadmCommands = g.commands(4)
	if g.chance(40) {
		spec.Verbosity = ptr.To(int32(g.r.IntN(11)))
	}
	if g.chance(35) {
		clc := &spec.Ignition.ContainerLinuxConfig
		clc.AdditionalConfig = g.pick(g.ordinary(4, clcs...)...)
		clc.Strict = g.optBool()
	} else if g.chance(5) {
		spec.Ignition.ContainerLinuxConfig.Strict = ptr.To(g.chance(50))
	}
	g.kubeadm(s)
}

// renderingIgnitionSpec is ignitionSpec kept to what CABPK renders, mostly.
func (g *gen) renderingIgnitionSpec(s *scenario) {
	g.safe = true
	g.ignitionSpec(s)
}

// TestLegacyIgnitionMatchesCABPK renders generated format: ignition configs
// (CABPK's Ignition 2.3, the default without nodeboot's version annotation)
// with CABPK's reconciler and with nodeboot. Where CABPK errors nodeboot must
// error at the same field; where it renders, the bytes must be the same.
func TestLegacyIgnitionMatchesCABPK(t *testing.T) {
	t.Parallel()
	enableGates(t)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	scenarios, _ := draw(t, Scenarios, 2026, bootstrapv1.Ignition, (*gen).renderingIgnitionSpec)
	fails := &failures{}
	var mu sync.Mutex
	cabpkErrs := map[string]int{}
	counts := &tally{}
	t.Run("cases", func(t *testing.T) {
		for _, s := range scenarios {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				objs := objects(t, s, certs)
				want := cabpk(t, s, objs)
				_, got, gotErr := nodeboot(s, objs, want.token, nil)
				if want.err != nil && os.Getenv("DIFF_DEBUG") != "" {
					t.Logf("cabpk: %v", want.err)
				}
				if want.err != nil {
					mu.Lock()
					cabpkErrs[errorClass(want.err)]++
					mu.Unlock()
				}
				o, d := classify(want, got, gotErr, bootstrapv1.Ignition)
				counts.add(s.name, o, want.err == nil)
				if d != "" {
					fails.add(s.name, d)
					t.Error(d)
				}
			})
		}
	})
	fails.log(t, "legacy ignition", len(scenarios))
	logClasses(t, "CABPK's reconciler errored (nodeboot must too, at the same field)", cabpkErrs)
	counts.log(t, "legacy ignition")
	counts.require(t, "legacy ignition", 90)
}

// errorClass is the start of an error message, without the details that
// differ per case.
func errorClass(err error) string {
	msg := digitsRE.ReplaceAllString(quotedRE.ReplaceAllString(err.Error(), `"…"`), "N")
	msg, _, _ = strings.Cut(msg, "\n")
	if len(msg) > 160 {
		msg = msg[:160]
	}
	return msg
}

var digitsRE = regexp.MustCompile(`[0-9]+`)
