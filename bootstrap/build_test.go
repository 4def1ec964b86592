package bootstrap_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

func vector(t *testing.T, name string) *bootstrap.Input {
	t.Helper()
	return testenv.VectorInput(t, filepath.Join(testenv.VectorsDir(t), name))
}

// TestStatesCABPKWaitsOn: the states in which CABPK requeues come back as
// sentinel errors, so a controller can wait and a CLI can explain.
func TestStatesCABPKWaitsOn(t *testing.T) {
	tests := []struct {
		name   string
		vector string
		mutate func(*bootstrap.Input)
		want   error
	}{
		{"worker before the control plane is initialized", "cc-join-worker-minimal-v1.33", func(in *bootstrap.Input) {
			in.Cluster.Status.Conditions[0].Status = metav1.ConditionFalse
		}, bootstrap.ErrControlPlaneNotInitialized},
		{"join without a token", "cc-join-worker-minimal-v1.33", func(in *bootstrap.Input) {
			in.Config.Spec.JoinConfiguration.Discovery.BootstrapToken.Token = ""
		}, bootstrap.ErrNoBootstrapToken},
		{"join without an endpoint", "cc-join-worker-minimal-v1.33", func(in *bootstrap.Input) {
			in.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{}
		}, bootstrap.ErrNoControlPlaneEndpoint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := vector(t, tt.vector)
			tt.mutate(in)
			_, err := bootstrap.Build(context.Background(), *in)
			require.True(t, errors.Is(err, tt.want), "got %v", err)
		})
	}
}

func TestRoles(t *testing.T) {
	for name, want := range map[string]provisioning.Role{
		"cc-init-minimal-v1.33":             provisioning.RoleInit,
		"cc-join-cp-minimal-v1.33":          provisioning.RoleJoinControlPlane,
		"cc-join-worker-minimal-v1.33":      provisioning.RoleJoinWorker,
		"cc-join-worker-machinepool-v1.35":  provisioning.RoleJoinWorker,
		"ign-join-worker-machinepool-v1.31": provisioning.RoleJoinWorker,
	} {
		res, err := bootstrap.Build(context.Background(), *vector(t, name))
		require.NoError(t, err, name)
		require.Equal(t, want, res.Plan.Role, name)
		cmds := res.Plan.CommandsIn(provisioning.PhaseBootstrap)
		require.Len(t, cmds, 1, name)
	}
}

// TestBuildDoesNotMutateInput: defaults CABPK writes back are in
// Result.Config, never in the caller's object.
func TestBuildDoesNotMutateInput(t *testing.T) {
	in := vector(t, "cc-join-worker-minimal-v1.33")
	before := in.Config.DeepCopy()
	res, err := bootstrap.Build(context.Background(), *in)
	require.NoError(t, err)
	require.Equal(t, before, in.Config)
	require.NotEmpty(t, res.Config.Spec.JoinConfiguration.Discovery.BootstrapToken.CACertHashes)
}

func TestInvalidErrorNamesObjectAndField(t *testing.T) {
	in := vector(t, "cc-join-worker-minimal-v1.33")
	in.Machine.Spec.Version = "not-a-version"
	_, err := bootstrap.Build(context.Background(), *in)
	var invalid *bootstrap.InvalidError
	require.ErrorAs(t, err, &invalid)
	require.Equal(t, "Machine default/cc-join-worker-minimal-v1.33", invalid.Problems[0].Object.String())
	require.Equal(t, "spec.version", invalid.Problems[0].Path.String())
}

// TestMissingSecretIsMarked: a problem that is only a Secret not existing yet
// says which Secret, so a controller waits instead of failing the input.
func TestMissingSecretIsMarked(t *testing.T) {
	in := vector(t, "cc-join-worker-contentfrom-passwdfrom-v1.34")
	in.Secrets = bootstrap.SecretMap{} // neither the CA nor the referenced Secrets exist
	_, err := bootstrap.Build(context.Background(), *in)
	var invalid *bootstrap.InvalidError
	require.ErrorAs(t, err, &invalid)
	for _, p := range invalid.Problems {
		require.NotEmpty(t, p.MissingSecret, "%s: %s", p.Object, p.Path)
	}

	in = vector(t, "cc-join-worker-minimal-v1.33")
	in.Machine.Spec.Version = "bogus"
	_, err = bootstrap.Build(context.Background(), *in)
	require.ErrorAs(t, err, &invalid)
	require.Empty(t, invalid.Problems[0].MissingSecret, "an invalid version is not a missing Secret")
}
