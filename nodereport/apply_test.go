package nodereport_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestApplyOnlyAddsBytes: every CABPK reference vector renders CABPK's bytes
// when the reporter is not applied, before and after it was applied to
// another build of the same input; applied, the data renders for each
// target without an error or a new warning, and carries the reporter.
func TestApplyOnlyAddsBytes(t *testing.T) {
	ca := testenv.TestCABundle(t)
	for _, dir := range testenv.Vectors(t, "") {
		if _, err := os.Stat(filepath.Join(dir, "input.yaml")); err != nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
			if err != nil {
				t.Fatal(err)
			}
			plain := render(t, testenv.BuildVector(t, dir))
			if !bytes.Equal(plain.Data, want) {
				t.Fatal("without the reporter the data is not CABPK's")
			}
			res := testenv.BuildVector(t, dir)
			targets := map[nodereport.Target]string{nodereport.CloudInit: provisioning.VersionCABPK}
			if res.Format == bootstrap.FormatIgnition {
				targets = map[nodereport.Target]string{nodereport.IgnitionLegacy: provisioning.VersionCABPK, nodereport.IgnitionV3: "3.4.0"}
			}
			for target, version := range targets {
				res := testenv.BuildVector(t, dir)
				res.Options.Version = version
				if version != provisioning.VersionCABPK {
					// The vectors' additional configs are Container Linux Configs, legacy only.
					res.Options.AdditionalConfig = nil
				}
				before := render(t, res)
				if err := nodereport.Apply(res.Plan, nodereport.Options{URL: "https://mgmt.example:9445/nodeboot/v1/report/ns/c", Credential: credential, CABundle: ca, Target: target}); err != nil {
					t.Fatal(err)
				}
				after := render(t, res)
				if len(after.Warnings) != len(before.Warnings) {
					t.Errorf("%s: the reporter adds warnings: %v", target, after.Warnings[len(before.Warnings):])
				}
				if !bytes.Contains(after.Data, []byte(nodereport.ScriptPath)) || len(after.Data) <= len(before.Data) {
					t.Errorf("%s: the data does not run the reporter", target)
				}
				t.Logf("%s: +%d bytes", target, len(after.Data)-len(before.Data))
			}
			if again := render(t, testenv.BuildVector(t, dir)); !bytes.Equal(again.Data, want) {
				t.Fatal("after Apply on another build the data is not CABPK's")
			}
		})
	}
}

func render(t *testing.T, res *bootstrap.Result) *provisioning.Output {
	t.Helper()
	out, err := res.Render()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestApplySteps: each command is followed (cloud-init) or preceded
// (Ignition) by the reporter line naming its step; a generated command
// without an Origin gets an index after the spec's, never a user's.
func TestApplySteps(t *testing.T) {
	plan := commandsPlan()
	// The add-on apply step, as addons inserts it: first after the bootstrap command.
	plan.Commands = append(plan.Commands[:4], append([]provisioning.Command{{Phase: provisioning.PhasePost, Script: "apply-addons"}}, plan.Commands[4:]...)...)
	if err := nodereport.Apply(plan, nodereport.Options{URL: "https://h/r", Credential: credential, Target: nodereport.CloudInit}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, phase := range []provisioning.Phase{provisioning.PhasePre, provisioning.PhaseBootstrap, provisioning.PhasePost} {
		for _, c := range plan.CommandsIn(phase) {
			if strings.HasPrefix(c.Script, "sh "+nodereport.ScriptPath) {
				got = append(got, strings.TrimPrefix(c.Script, "sh "+nodereport.ScriptPath+" "))
			} else {
				got = append(got, "<"+c.Script[:min(len(c.Script), 10)]+">")
			}
		}
	}
	want := []string{"started",
		`<export GRE>`, `check "$?" 'preKubeadmCommands[0]'`,
		`<cd "$WORK">`, `check "$?" 'preKubeadmCommands[1]'`,
		`<[ "$(pwd)">`, `check "$?" 'preKubeadmCommands[2]'`,
		`<echo kubea>`, `check "$?" 'kubeadm'`,
		`<apply-addo>`, `check "$?" 'postKubeadmCommands[1]'`,
		`<echo post0>`, `check "$?" 'postKubeadmCommands[0]'`,
		`finish "$?"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := nodereport.Apply(plan, nodereport.Options{URL: "https://h/r", Credential: credential}); !errors.Is(err, nodereport.ErrInvalidPlan) {
		t.Fatalf("applying twice: %v", err)
	}
}

// TestValidate: bad options are errors naming the option, never a value.
func TestValidate(t *testing.T) {
	ca := testenv.TestCABundle(t)
	good := nodereport.Options{URL: "https://mgmt.example:9445/nodeboot/v1/report/ns/c", Credential: credential, CABundle: ca}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	key := []byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n")
	for name, tc := range map[string]struct {
		mutate func(*nodereport.Options)
		field  string
	}{
		"http":       {func(o *nodereport.Options) { o.URL = "http://mgmt.example/r" }, "url"},
		"userinfo":   {func(o *nodereport.Options) { o.URL = "https://user:pw-secret@mgmt.example/r" }, "url"},
		"query":      {func(o *nodereport.Options) { o.URL = "https://mgmt.example/r?x=pw-secret" }, "url"},
		"fragment":   {func(o *nodereport.Options) { o.URL = "https://mgmt.example/r#pw-secret" }, "url"},
		"no host":    {func(o *nodereport.Options) { o.URL = "https:///r" }, "url"},
		"quote":      {func(o *nodereport.Options) { o.URL = "https://mgmt.example/'pw-secret" }, "url"},
		"long url":   {func(o *nodereport.Options) { o.URL = "https://mgmt.example/" + strings.Repeat("a", nodereport.MaxURL) }, "url"},
		"empty":      {func(o *nodereport.Options) { o.Credential = "" }, "credential"},
		"short":      {func(o *nodereport.Options) { o.Credential = "pw-secret" }, "credential"},
		"charset":    {func(o *nodereport.Options) { o.Credential = "pw-secret/pw-secret/pw-secret" }, "credential"},
		"long":       {func(o *nodereport.Options) { o.Credential = strings.Repeat("pw-secret", 40) }, "credential"},
		"key in ca":  {func(o *nodereport.Options) { o.CABundle = append(append([]byte{}, ca...), key...) }, "caBundle"},
		"not pem":    {func(o *nodereport.Options) { o.CABundle = []byte("pw-secret") }, "caBundle"},
		"huge ca":    {func(o *nodereport.Options) { o.CABundle = bytes.Repeat(ca, 1+nodereport.MaxCABundle/len(ca)) }, "caBundle"},
		"bad target": {func(o *nodereport.Options) { o.Target = 7 }, "target"},
	} {
		t.Run(name, func(t *testing.T) {
			o := good
			o.CABundle = append([]byte{}, ca...)
			tc.mutate(&o)
			err := o.Validate()
			var oe *nodereport.OptionError
			if !errors.Is(err, nodereport.ErrInvalidOptions) || !errors.As(err, &oe) || oe.Field != tc.field {
				t.Fatalf("got %v, want an error naming %s", err, tc.field)
			}
			if strings.Contains(err.Error(), "pw-secret") || strings.Contains(err.Error(), "MHcCAQEE") {
				t.Fatalf("the error carries the value: %v", err)
			}
			if err := nodereport.Apply(&provisioning.Plan{}, o); !errors.Is(err, nodereport.ErrInvalidOptions) {
				t.Fatalf("Apply accepted invalid options: %v", err)
			}
		})
	}
}
