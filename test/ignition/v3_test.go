package ignition

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// buildAs builds a vector's input as format: ignition with the given
// nodeboot.dev/ignition-version annotation, whatever format it was made for:
// the cloud-config vectors use features (bootCommands, gzip, inactive users)
// that only the native dialect can express.
func buildAs(t testing.TB, dir, version string) *bootstrap.Result {
	t.Helper()
	return buildWith(t, dir, version, func(*bootstrapv1.KubeadmConfig) {})
}

// buildWith is buildAs with a change to the KubeadmConfig before the build.
func buildWith(t testing.TB, dir, version string, change func(*bootstrapv1.KubeadmConfig)) *bootstrap.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	defer f.Close()
	set, err := manifest.Parse(f)
	require.NoError(t, err)
	in, err := set.Input("")
	require.NoError(t, err)
	in.Config.Spec.Format = bootstrapv1.Ignition
	if in.Config.Annotations == nil {
		in.Config.Annotations = map[string]string{}
	}
	in.Config.Annotations[bootstrap.AnnotationIgnitionVersion] = version
	change(in.Config)
	res, err := bootstrap.Build(context.Background(), *in)
	require.NoError(t, err)
	require.Equal(t, version, res.Options.Version)
	return res
}

// allVectors is every reference vector, cloud-config and Ignition alike.
func allVectors(t testing.TB) []string {
	t.Helper()
	return append(testenv.Vectors(t, "cc-"), testenv.Vectors(t, "ign-")...)
}

// v3Unexpressible lists, per vector, the fields Ignition v3 truly cannot
// express. Those vectors are rendered twice: as they are, which must fail
// naming exactly these fields, and without those fields, which must pass.
var v3Unexpressible = map[string][]string{
	"cc-init-all-features-v1.35": {
		"spec.diskSetup.partitions[1].tableType",
		"spec.diskSetup.partitions[1].diskLayout[0].percentage",
		"spec.diskSetup.partitions[1].diskLayout[1].percentage",
		"spec.diskSetup.filesystems[1].replaceFS",
		"spec.diskSetup.filesystems[1].partition",
	},
}

// v3Buildable drops what v3 cannot express, and the Container Linux Config
// additional config of the ign-* vectors, which only the legacy dialect reads.
func v3Buildable(c *bootstrapv1.KubeadmConfig) {
	c.Spec.Ignition = bootstrapv1.IgnitionSpec{}
	d := &c.Spec.DiskSetup
	for i := range d.Partitions {
		if d.Partitions[i].TableType == "mbr" {
			d.Partitions[i].TableType = "gpt"
		}
		if len(d.Partitions[i].DiskLayout) > 0 {
			d.Partitions[i].DiskLayout = []bootstrapv1.PartitionSpec{{Percentage: 100, PartitionType: "Linux"}}
		}
	}
	for i := range d.Filesystems {
		d.Filesystems[i].ReplaceFS = ""
		if d.Filesystems[i].Partition == "auto" || d.Filesystems[i].Partition == "any" {
			d.Filesystems[i].Partition = "1"
		}
	}
}

func TestV3VectorsUnexpressible(t *testing.T) {
	for name, want := range v3Unexpressible {
		t.Run(name, func(t *testing.T) {
			_, err := buildAs(t, filepath.Join(testenv.VectorsDir(t), name), "3.4.0").Render()
			require.ElementsMatch(t, want, errorPaths(t, err))
		})
	}
}

func TestV3CLCAdditionalConfigIsRefused(t *testing.T) {
	_, err := buildAs(t, filepath.Join(testenv.VectorsDir(t), "ign-join-worker-additionalconfig-strict-v1.32"), "3.4.0").Render()
	require.Equal(t, []string{"spec.ignition.containerLinuxConfig.additionalConfig"}, errorPaths(t, err))
}

// TestV3VectorsValidate renders every vector in every native version and
// checks the output with Ignition's own parser and validation.
func TestV3VectorsValidate(t *testing.T) {
	for _, version := range ignition.Versions[1:] {
		for _, dir := range allVectors(t) {
			t.Run(version+"/"+filepath.Base(dir), func(t *testing.T) {
				res := buildWith(t, dir, version, v3Buildable)
				out, err := res.Render()
				require.NoError(t, err)
				require.Equal(t, ignition.Format, out.Format)
				cfg, r, err := v35.ParseCompatibleVersion(out.Data)
				require.NoError(t, err, r.String())
				require.False(t, r.IsFatal(), r.String())
				require.Equal(t, len(out.Data), out.Sizes["total"])
				// Every Plan file is in the output, at its path.
				paths := map[string]bool{}
				for _, f := range cfg.Storage.Files {
					paths[f.Path] = true
				}
				for _, f := range res.Plan.Files {
					require.True(t, paths[f.Path], "missing %s", f.Path)
				}
			})
		}
	}
}
