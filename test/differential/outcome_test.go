package differential

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	cabpkcloudinit "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	cabpkignition "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/ignition"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
)

// outcome is how one differential case ended. Only the first two pass.
type outcome int

const (
	outIdentical outcome = iota
	outSameField
	outDifferentFields
	outOneSide
	outDiffers
	// outUnmapped: both refused, but CABPK's refusal is one the table below
	// cannot place on a field, so whether the fields agree is unknown.
	outUnmapped
	outcomes
)

var outcomeNames = [outcomes]string{"identical", "refused by both at the same field", "refused by both at different fields",
	"refused by one side only", "differs", "refused by both, CABPK's reason not mapped to a field"}

func (o outcome) String() string { return outcomeNames[o] }

func (o outcome) passes() bool { return o == outIdentical || o == outSameField }

// refusal is why one side refused: the spec fields it names (for CABPK,
// mapped from its webhook's field paths or its reconciler's messages).
type refusal struct {
	paths []string
	// why is the message, for the report.
	why string
}

// classify compares CABPK's result with nodeboot's for one case.
func classify(want cabpkResult, got []byte, gotErr error, format bootstrapv1.Format) (outcome, string) {
	switch {
	case want.err != nil && gotErr != nil:
		ours := nodebootRefusal(gotErr)
		theirs := want.refusal
		switch {
		case len(theirs.paths) == 0:
			return outUnmapped, fmt.Sprintf("both refuse; CABPK's reason has no known field:\n  cabpk: %s\n  nodeboot: %v", theirs.why, ours.paths)
		case sameField(theirs.paths, ours.paths):
			return outSameField, ""
		}
		return outDifferentFields, fmt.Sprintf("both refuse, at different fields:\n  cabpk at %v: %s\n  nodeboot at %v: %s", theirs.paths, firstLine(theirs.why), ours.paths, firstLine(ours.why))
	case want.err != nil:
		return outOneSide, fmt.Sprintf("CABPK refuses but nodeboot renders:\n  cabpk at %v: %v", want.refusal.paths, want.err)
	case gotErr != nil:
		return outOneSide, fmt.Sprintf("CABPK renders but nodeboot refuses:\n  nodeboot: %v", gotErr)
	case want.format != string(format):
		return outDiffers, fmt.Sprintf("CABPK wrote format %q", want.format)
	}
	if d := compare(want.data, got); d != "" {
		return outDiffers, d
	}
	return outIdentical, ""
}

// sameField: some field nodeboot names is one CABPK names, or inside it
// (CABPK's messages often name only a list item, nodeboot the field in it).
func sameField(theirs, ours []string) bool {
	for _, c := range theirs {
		for _, n := range ours {
			if n == c || strings.HasPrefix(n, c+".") || strings.HasPrefix(n, c+"[") {
				return true
			}
		}
	}
	return false
}

// nodebootRefusal reads nodeboot's typed error: the paths of its Problems.
// An error without them names no field (and so matches none).
func nodebootRefusal(err error) refusal {
	r := refusal{why: err.Error()}
	var invalid *bootstrap.InvalidError
	if errors.As(err, &invalid) {
		for _, p := range invalid.Problems {
			path := p.Path.String()
			if p.Object.Kind != "KubeadmConfig" {
				path = p.Object.Kind + " " + path
			}
			r.paths = append(r.paths, path)
		}
	}
	return r
}

// cabpkMessages maps CABPK v1.14.2's reconciler errors (its texts, from its
// source) to the spec fields they are about. The first match wins.
var cabpkMessages = []struct {
	re    *regexp.Regexp
	paths func(s *scenario, m []string) []string
}{
	{regexp.MustCompile(`failed to (?:parse|execute) template for file ("(?:[^"\\]|\\.)*")`), fileByQuotedPath},
	{regexp.MustCompile(`rendered output exceeds the \d+ byte limit|failed to resolve file source`), fixed("spec.files")},
	{regexp.MustCompile(`failed to resolve passwd source`), fixed("spec.users")},
	{regexp.MustCompile(`failed to marshal kubeconfig from JoinConfiguration\.Discovery\.File\.KubeConfig`), fixed("spec.joinConfiguration.discovery.file.kubeConfig")},
	// The kubeadm configuration is one YAML document of these three.
	{regexp.MustCompile(`failed to generate yaml for the Kubeadm API`), fixed("spec.clusterConfiguration", "spec.initConfiguration", "spec.joinConfiguration")},
	{regexp.MustCompile(`Machine is a Worker, but JoinConfiguration\.ControlPlane is set`), fixed("spec.joinConfiguration.controlPlane")},
	{regexp.MustCompile(`converting additional CLC to Ignition`), fixed("spec.ignition.containerLinuxConfig.additionalConfig")},
	// CABPK's own CLC: its errors name a line of a document the test cannot
	// see, so the field is found by asking CABPK's renderer about each item.
	{regexp.MustCompile(`rendering CLC configuration|converting generated CLC to Ignition`), isolateCLC},
}

func fixed(paths ...string) func(*scenario, []string) []string {
	return func(*scenario, []string) []string { return paths }
}

func fileByQuotedPath(s *scenario, m []string) []string {
	path, err := strconv.Unquote(m[1])
	if err != nil {
		return nil
	}
	for i, f := range s.config.Spec.Files {
		if f.Path == path {
			return []string{fmt.Sprintf("spec.files[%d]", i)}
		}
	}
	return nil
}

// cabpkRefusal places CABPK's reconciler error on spec fields; no paths
// when no entry of cabpkMessages knows it.
func cabpkRefusal(s *scenario, err error) refusal {
	r := refusal{why: err.Error()}
	for _, m := range cabpkMessages {
		if sub := m.re.FindStringSubmatch(r.why); sub != nil {
			r.paths = m.paths(s, sub)
			break
		}
	}
	return r
}

// isolateCLC renders each item of the spec CABPK puts into its generated
// CLC alone, with CABPK's own Ignition renderer, and returns the items that
// fail alone. Items that fail only together are not found (the refusal
// then stays unmapped, which fails the case visibly).
func isolateCLC(s *scenario, _ []string) []string {
	spec := &s.config.Spec
	version, err := semver.ParseTolerant(s.version)
	if err != nil {
		return nil
	}
	var paths []string
	try := func(path string, set func(*cabpkcloudinit.BaseUserData)) {
		in := &cabpkignition.NodeInput{NodeInput: &cabpkcloudinit.NodeInput{BaseUserData: cabpkcloudinit.BaseUserData{KubernetesVersion: version}}}
		set(&in.BaseUserData)
		if _, _, err := cabpkignition.NewNode(in); err != nil {
			paths = append(paths, path)
		}
	}
	for i, f := range spec.Files {
		f := *f.DeepCopy()
		if f.ContentFrom.IsDefined() {
			f.Content = s.secretValue(f.ContentFrom.Secret.Name, f.ContentFrom.Secret.Key)
			f.ContentFrom = bootstrapv1.FileSource{}
		}
		try(fmt.Sprintf("spec.files[%d]", i), func(b *cabpkcloudinit.BaseUserData) { b.AdditionalFiles = []bootstrapv1.File{f} })
	}
	for i, u := range spec.Users {
		u := *u.DeepCopy()
		if u.PasswdFrom.IsDefined() {
			u.Passwd = s.secretValue(u.PasswdFrom.Secret.Name, u.PasswdFrom.Secret.Key)
			u.PasswdFrom = bootstrapv1.PasswdSource{}
		}
		try(fmt.Sprintf("spec.users[%d]", i), func(b *cabpkcloudinit.BaseUserData) { b.Users = []bootstrapv1.User{u} })
	}
	if spec.NTP.IsDefined() {
		for i, server := range spec.NTP.Servers {
			try(fmt.Sprintf("spec.ntp.servers[%d]", i), func(b *cabpkcloudinit.BaseUserData) {
				b.NTP = &bootstrapv1.NTP{Enabled: spec.NTP.Enabled, Servers: []string{server}}
			})
		}
	}
	for i, p := range spec.DiskSetup.Partitions {
		try(fmt.Sprintf("spec.diskSetup.partitions[%d]", i), func(b *cabpkcloudinit.BaseUserData) {
			b.DiskSetup = &bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{p}}
		})
	}
	for i, f := range spec.DiskSetup.Filesystems {
		try(fmt.Sprintf("spec.diskSetup.filesystems[%d]", i), func(b *cabpkcloudinit.BaseUserData) {
			b.DiskSetup = &bootstrapv1.DiskSetup{Filesystems: []bootstrapv1.Filesystem{f}}
		})
	}
	// CABPK writes the discovery kubeconfig as a file at kubeConfigPath.
	if file := spec.JoinConfiguration.Discovery.File; file.KubeConfig.IsDefined() {
		try("spec.joinConfiguration.discovery.file", func(b *cabpkcloudinit.BaseUserData) {
			b.AdditionalFiles = []bootstrapv1.File{{Path: file.KubeConfigPath, Permissions: "0640", Content: "x"}}
		})
	}
	for i, m := range spec.Mounts {
		try(fmt.Sprintf("spec.mounts[%d]", i), func(b *cabpkcloudinit.BaseUserData) { b.Mounts = []bootstrapv1.MountPoints{m} })
	}
	for i, c := range spec.PreKubeadmCommands {
		try(fmt.Sprintf("spec.preKubeadmCommands[%d]", i), func(b *cabpkcloudinit.BaseUserData) { b.PreKubeadmCommands = []string{c} })
	}
	for i, c := range spec.PostKubeadmCommands {
		try(fmt.Sprintf("spec.postKubeadmCommands[%d]", i), func(b *cabpkcloudinit.BaseUserData) { b.PostKubeadmCommands = []string{c} })
	}
	return paths
}

// secretValue is the value of key in the scenario's Secret name.
func (s *scenario) secretValue(name, key string) string {
	for _, sec := range s.secrets {
		if sec.Name == name {
			return string(sec.Data[key])
		}
	}
	return ""
}

// tally counts outcomes, with the first case of each.
type tally struct {
	mu       sync.Mutex
	n        [outcomes]int
	first    [outcomes]string
	rendered int
}

func (t *tally) add(name string, o outcome, cabpkRendered bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n[o]++
	if t.first[o] == "" {
		t.first[o] = name
	}
	if cabpkRendered {
		t.rendered++
	}
}

func (t *tally) total() int {
	n := 0
	for _, k := range t.n {
		n += k
	}
	return n
}

// log prints the counts: the README's figures come from these lines.
func (t *tally) log(tb testing.TB, what string) {
	tb.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d cases, CABPK rendered %d", what, t.total(), t.rendered)
	for o := outcome(0); o < outcomes; o++ {
		fmt.Fprintf(&b, "\n  %5d  %s", t.n[o], o)
		if t.first[o] != "" && !o.passes() {
			fmt.Fprintf(&b, " (first: %s)", t.first[o])
		}
	}
	tb.Log(b.String())
}

// require asserts the floors: no case in a failing outcome, and at least
// minRendered percent of the cases rendered by CABPK.
func (t *tally) require(tb testing.TB, what string, minRendered int) {
	tb.Helper()
	for o := outcome(0); o < outcomes; o++ {
		if !o.passes() {
			require.Zero(tb, t.n[o], "%s: %s", what, o)
		}
	}
	require.GreaterOrEqual(tb, t.rendered*100, t.total()*minRendered, "%s: CABPK must render at least %d%% of the cases, or the comparison proves little", what, minRendered)
}

// TestClassifierReachesEveryOutcome builds cases that end in each outcome,
// so a failing outcome is known to be reachable (and counted as failing).
func TestClassifierReachesEveryOutcome(t *testing.T) {
	s := probeScenario(bootstrapv1.Ignition, probeField{name: "classifier"})
	s.config.Spec.Files = []bootstrapv1.File{{Path: "/etc/a", Permissions: "0644", Content: "a\n"},
		{Path: "/etc/b", Permissions: "0644", ContentFormat: bootstrapv1.FileContentFormatTemplate, Content: "{{ if }}"}}
	s.config.Spec.Mounts = []bootstrapv1.MountPoints{{"data", "/mnt/x"}, {"data"}}
	invalidAt := func(path ...string) error {
		e := &bootstrap.InvalidError{}
		for _, p := range path {
			var pp bootstrap.ObjectProblem
			pp.Object = bootstrap.ObjectRef{Kind: "KubeadmConfig", Namespace: "default", Name: s.name}
			pp.Path = pathOf(p)
			e.Problems = append(e.Problems, pp)
		}
		return e
	}
	templateErr := errors.New(`failed to render templates: failed to parse template for file "/etc/b": template: /etc/b:1: missing value for if`)
	rendered := cabpkResult{data: []byte("a\nb\n"), format: string(bootstrapv1.Ignition)}
	refused := func(err error) cabpkResult { return cabpkResult{err: err, refusal: cabpkRefusal(s, err)} }

	for name, c := range map[string]struct {
		want   cabpkResult
		got    []byte
		gotErr error
		is     outcome
	}{
		"identical":                      {rendered, []byte("a\nb\n"), nil, outIdentical},
		"differs":                        {rendered, []byte("a\nB\n"), nil, outDiffers},
		"nodeboot refuses alone":         {rendered, nil, invalidAt("spec.files[1].content"), outOneSide},
		"CABPK refuses alone":            {refused(templateErr), []byte("x"), nil, outOneSide},
		"same file, field inside":        {refused(templateErr), nil, invalidAt("spec.users[0].name", "spec.files[1].content"), outSameField},
		"other file":                     {refused(templateErr), nil, invalidAt("spec.files[0].content"), outDifferentFields},
		"a prefix of the name is not it": {refused(errors.New(`failed to marshal kubeconfig from JoinConfiguration.Discovery.File.KubeConfig: x`)), nil, invalidAt("spec.joinConfiguration.discovery.file.kubeConfigPath"), outDifferentFields},
		"nodeboot names no field":        {refused(templateErr), nil, errors.New("refused"), outDifferentFields},
		"CABPK's reason unknown":         {refused(errors.New("cabpk failed")), nil, invalidAt("spec.files[1]"), outUnmapped},
		"CLC isolated to the item":       {refused(errors.New("rendering CLC configuration: failed to render template")), nil, invalidAt("spec.mounts[1][1]"), outSameField},
		"CLC isolated, other item":       {refused(errors.New("rendering CLC configuration: failed to render template")), nil, invalidAt("spec.mounts[0][1]"), outDifferentFields},
	} {
		got, detail := classify(c.want, c.got, c.gotErr, bootstrapv1.Ignition)
		require.Equal(t, c.is, got, "%s: %s", name, detail)
		require.Equal(t, got.passes(), detail == "", "%s: a failing outcome says why, a passing one does not", name)
	}
	// The isolation asks CABPK: the one-field mount is what its CLC
	// template cannot render (index out of range), the other renders.
	require.Equal(t, []string{"spec.mounts[1]"}, isolateCLC(s, nil))
	s.config.Spec.Mounts[1] = bootstrapv1.MountPoints{"data", "/mnt/y"}
	s.config.Spec.Files[0].Permissions = ""
	require.Equal(t, []string{"spec.files[0]"}, isolateCLC(s, nil), "a file without a mode fails CABPK's strict CLC conversion")
	s.config.Spec.Files[0].Permissions = "0644"
	require.Empty(t, isolateCLC(s, nil))
}

// pathOf parses what Path.String prints (fields, [index], [key]).
func pathOf(s string) provisioning.Path {
	var p provisioning.Path
	for _, part := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if p.IsZero() {
			p = provisioning.NewPath(name)
		} else {
			p = p.Field(name)
		}
		for rest != "" {
			var idx string
			idx, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			if i, err := strconv.Atoi(idx); err == nil {
				p = p.Index(i)
			} else {
				p = p.Key(idx)
			}
		}
	}
	return p
}
