// Package bench compares nodeboot's renderers with CABPK's on the same input,
// in the same run: go test -run XXX -bench . -benchmem ./test/bench/
package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	cabpkcloudinit "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// initInputs builds, from the all-features init vector, the Plan nodeboot
// renders and the input CABPK's pkg/cloudinit renders, and checks both give
// the vector's bytes, so the benchmark compares equal work.
func initInputs(b testing.TB) (*provisioning.Plan, *cabpkcloudinit.ControlPlaneInput) {
	b.Helper()
	dir := filepath.Join(testenv.VectorsDir(b), "cc-init-all-features-v1.35")
	f, err := os.Open(filepath.Join(dir, "input.yaml"))
	require.NoError(b, err)
	defer f.Close()
	set, err := manifest.Parse(f)
	require.NoError(b, err)
	in, err := set.Input("")
	require.NoError(b, err)
	res, err := bootstrap.Build(context.Background(), *in)
	require.NoError(b, err)
	want, err := os.ReadFile(filepath.Join(dir, "bootstrap-data"))
	require.NoError(b, err)

	spec := &res.Config.Spec
	var files []bootstrapv1.File
	var kubeadmYAML string
	for _, pf := range res.Plan.Files {
		switch {
		case pf.BootstrapInput:
			kubeadmYAML = pf.Content
		case pf.Origin.HasPrefix(provisioning.NewPath("spec", "files")):
			files = append(files, bootstrapv1.File{Path: pf.Path, Owner: pf.Owner, Permissions: pf.Permissions,
				Encoding: bootstrapv1.Encoding(pf.Encoding), Append: pf.Append, Content: pf.Content})
		}
	}
	docs := strings.SplitN(strings.TrimPrefix(kubeadmYAML, "---\n"), "\n---\n", 2)
	var users []bootstrapv1.User
	for _, u := range res.Plan.Users {
		users = append(users, bootstrapv1.User{Name: u.Name, Gecos: u.Gecos, Groups: u.Groups, HomeDir: u.HomeDir, Inactive: u.Inactive,
			Shell: u.Shell, Passwd: u.Passwd, PrimaryGroup: u.PrimaryGroup, LockPassword: u.LockPassword, Sudo: u.Sudo, SSHAuthorizedKeys: u.SSHAuthorizedKeys})
	}
	cabpk := &cabpkcloudinit.ControlPlaneInput{
		BaseUserData: cabpkcloudinit.BaseUserData{
			AdditionalFiles: files, NTP: &spec.NTP, BootCommands: spec.BootCommands,
			PreKubeadmCommands: spec.PreKubeadmCommands, PostKubeadmCommands: spec.PostKubeadmCommands,
			Users: users, Mounts: spec.Mounts, DiskSetup: &spec.DiskSetup, KubeadmVerbosity: "--v 5",
			KubernetesVersion: semver.MustParse("1.35.0"),
		},
		Certificates:         res.Certificates,
		ClusterConfiguration: docs[0],
		InitConfiguration:    docs[1],
	}
	got, err := cabpkcloudinit.NewInitControlPlane(cabpk)
	require.NoError(b, err)
	require.Equal(b, string(want), string(got), "CABPK's input must reproduce the vector")
	out, err := (&cloudinit.Renderer{}).Render(res.Plan, provisioning.Options{Version: provisioning.VersionCABPK})
	require.NoError(b, err)
	require.Equal(b, string(want), string(out.Data), "nodeboot's plan must reproduce the vector")
	return res.Plan, cabpk
}

func BenchmarkRenderInitControlPlane(b *testing.B) {
	plan, cabpk := initInputs(b)
	b.Run("nodeboot", func(b *testing.B) {
		r := &cloudinit.Renderer{}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Render(plan, provisioning.Options{Version: provisioning.VersionCABPK}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cabpk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cabpkcloudinit.NewInitControlPlane(cabpk); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBenchmarkInputs keeps the benchmark honest in every test run: both
// renderers' inputs must still reproduce the reference vector.
func TestBenchmarkInputs(t *testing.T) { initInputs(t) }
