package bootstrap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"

	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit" // registers "cloud-config"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"  // registers "ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
)

// TestProblemsNameSpecFields: the Plan carries its spec origins, so the
// provisioners' problems name KubeadmConfig fields and objects directly,
// with no table translating Plan paths afterwards.
func TestProblemsNameSpecFields(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vector  string
		mutate  func(*bootstrap.Input)
		path    string
		class   error
		warning bool
	}{
		{"mount without a mount point", "cc-join-worker-minimal-v1.33", func(in *bootstrap.Input) {
			in.Config.Spec.Mounts = []bootstrapv1.MountPoints{{"/dev/sdb"}}
		}, "spec.mounts[0]", nil, true},
		{"blank NTP server", "cc-join-worker-minimal-v1.33", func(in *bootstrap.Input) {
			in.Config.Spec.NTP = bootstrapv1.NTP{Servers: []string{" "}}
		}, "spec.ntp.servers[0]", nil, true},
		{"boot commands in legacy Ignition", "ign-join-worker-machinepool-v1.31", func(in *bootstrap.Input) {
			in.Config.Spec.BootCommands = []string{"true"}
		}, "spec.bootCommands", provisioning.ErrUnsupported, false},
		{"unknown Ignition version", "ign-join-worker-machinepool-v1.31", func(in *bootstrap.Input) {
			in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "9.9.9"}
		}, "metadata.annotations[" + bootstrap.AnnotationIgnitionVersion + "]", provisioning.ErrUnsupported, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := vector(t, tc.vector)
			tc.mutate(in)
			res, err := bootstrap.Build(context.Background(), *in)
			require.NoError(t, err)
			out, err := res.Render()
			if tc.warning {
				require.NoError(t, err)
				var paths []string
				for _, w := range out.Warnings {
					paths = append(paths, w.Path.String())
				}
				require.Contains(t, paths, tc.path)
				return
			}
			var invalid *bootstrap.InvalidError
			require.True(t, errors.As(err, &invalid), "got %v", err)
			require.True(t, errors.Is(err, tc.class), "got %v", err)
			require.Equal(t, bootstrap.ObjectRef{Kind: "KubeadmConfig", Namespace: in.Config.Namespace, Name: in.Config.Name}, invalid.Problems[0].Object)
			require.Equal(t, tc.path, invalid.Problems[0].Path.String())
		})
	}
}

// TestMissingSecretIsASecretObject: certificate problems name the Secret
// as a typed object, which the controller tells apart by Kind.
func TestMissingSecretIsASecretObject(t *testing.T) {
	in := vector(t, "cc-join-worker-minimal-v1.33")
	in.Secrets = bootstrap.SecretMap{}
	_, err := bootstrap.Build(context.Background(), *in)
	var invalid *bootstrap.InvalidError
	require.True(t, errors.As(err, &invalid), "got %v", err)
	require.Equal(t, "Secret", invalid.Problems[0].Object.Kind)
	require.Equal(t, in.Cluster.Namespace, invalid.Problems[0].Object.Namespace)
	require.NotEmpty(t, invalid.Problems[0].MissingSecret)
	require.True(t, errors.Is(err, provisioning.ErrInvalid))
}
