package differential

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
)

// RefusalScenarios is how many configs drawn to be refused each refusal
// set compares: the rendering sets are drawn to render, so refusals get a
// set of their own.
const RefusalScenarios = 200

// refusingSpec is spec with, most of the time, one thing CABPK's
// reconciler refuses added.
func (g *gen) refusingSpec(s *scenario) {
	g.spec(s)
	g.breakOne(s)
}

// refusingIgnitionSpec is ignitionSpec drawn without safe (YAML-special
// values break CABPK's strict CLC everywhere) and one breaker more.
func (g *gen) refusingIgnitionSpec(s *scenario) {
	g.ignitionSpec(s)
	g.breakOne(s)
}

// brokenTemplates are file templates CABPK's reconciler cannot parse or
// execute.
var brokenTemplates = []string{"{{ unclosed\n", "{{ .controlPlane.version | len }}\n", "{{ if }}{{ end }}", "{{ template \"x\" }}", "{{ not go }}\n"}

// breakOne adds one input CABPK's reconciler refuses: a file template it
// cannot parse or execute, inline or from a Secret, or (Ignition) a mount
// its CLC template cannot index. A quarter of the time it adds nothing.
func (g *gen) breakOne(s *scenario) {
	spec := &s.config.Spec
	f := bootstrapv1.File{Path: fmt.Sprintf("/etc/gen/broken-%d", len(spec.Files)), Permissions: "0644",
		ContentFormat: bootstrapv1.FileContentFormatTemplate, Content: g.pick(brokenTemplates...)}
	switch g.r.IntN(4) {
	case 0, 1:
		spec.Files = append(spec.Files, f)
	case 2:
		if spec.Format == bootstrapv1.Ignition && g.chance(50) {
			spec.Mounts = append(spec.Mounts, bootstrapv1.MountPoints{g.pick("data", "/dev/sdc1")})
			return
		}
		name := s.name + "-broken"
		s.secrets = append(s.secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.config.Namespace},
			Data: map[string][]byte{"tpl": []byte(f.Content)}})
		f.Content, f.ContentFrom = "", bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: name, Key: "tpl"}}
		spec.Files = append(spec.Files, f)
	}
}

// TestRefusalsMatchCABPK compares configs drawn to be refused: where CABPK
// refuses, nodeboot must refuse at the same field.
func TestRefusalsMatchCABPK(t *testing.T) {
	t.Parallel()
	enableGates(t)
	certs := secret.NewCertificatesForInitialControlPlane(nil)
	require.NoError(t, certs.Generate())
	for _, set := range []struct {
		format bootstrapv1.Format
		fill   func(*gen, *scenario)
		seed   uint64
	}{
		{bootstrapv1.CloudConfig, (*gen).refusingSpec, 20261202},
		{bootstrapv1.Ignition, (*gen).refusingIgnitionSpec, 20261203},
	} {
		t.Run(string(set.format), func(t *testing.T) {
			t.Parallel()
			scenarios, _ := draw(t, RefusalScenarios, set.seed, set.format, set.fill)
			counts, fails := &tally{}, &failures{}
			t.Run("cases", func(t *testing.T) {
				for _, s := range scenarios {
					t.Run(s.name, func(t *testing.T) {
						t.Parallel()
						objs := objects(t, s, certs)
						want := cabpk(t, s, objs)
						_, got, gotErr := nodeboot(s, objs, want.token, nil)
						o, d := classify(want, got, gotErr, set.format)
						counts.add(s.name, o, want.err == nil)
						if d != "" {
							fails.add(s.name, d)
							t.Error(d)
						}
					})
				}
			})
			what := string(set.format) + " refusal set"
			fails.log(t, what, len(scenarios))
			counts.log(t, what)
			counts.require(t, what, 0)
			require.GreaterOrEqual(t, (counts.total()-counts.rendered)*100, counts.total()*40, "%s: CABPK must refuse at least 40%% of it, or it compares few refusals", what)
		})
	}
}
