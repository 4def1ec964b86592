package ignition

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/provisioning"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// rsaInitWithAddons is the minimal init vector as Ignition 3.4.0 with Cluster
// API's default RSA-2048 certificates (or the vector's EC keys) and Flannel
// plus NodeLocal DNSCache, through the controller's add-on extension, on a
// Cluster with a 64 KiB budget annotation.
func rsaInitWithAddons(t *testing.T, rsa bool) *bootstrap.Result {
	t.Helper()
	ctx := context.Background()
	in := testenv.VectorInput(t, filepath.Join(testenv.VectorsDir(t), "ign-init-minimal-v1.33"))
	if rsa {
		testenv.UseDefaultCertificates(t, in)
	}
	in.Cluster.Labels = map[string]string{"cni": "flannel"}
	in.Cluster.Annotations = map[string]string{addonsctrl.AnnotationMaxBytes: "65536"}
	in.Config = in.Config.DeepCopy()
	in.Config.Annotations = map[string]string{bootstrap.AnnotationIgnitionVersion: "3.4.0"}
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	require.NoError(t, addonsv1.AddToScheme(s))
	sel := metav1.LabelSelector{MatchLabels: map[string]string{"cni": "flannel"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&addonsv1.FirstBootAddon{ObjectMeta: metav1.ObjectMeta{Name: "cni", Namespace: in.Cluster.Namespace},
			Spec: addonsv1.FirstBootAddonSpec{ClusterSelector: sel, Builtin: &addonsv1.BuiltinSource{Name: addonsv1.BuiltinFlannel}}},
		&addonsv1.FirstBootAddon{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: in.Cluster.Namespace},
			Spec: addonsv1.FirstBootAddonSpec{ClusterSelector: sel, Order: 10, Builtin: &addonsv1.BuiltinSource{Name: addonsv1.BuiltinNodeLocalDNS}}},
	).Build()
	ext := addonsctrl.NewExtension(c, addonsctrl.ExtensionOptions{MaxBytes: 16384, Compress: true})
	require.NoError(t, ext.MutateConfig(ctx, in.Cluster, in.Config))
	res, err := bootstrap.Build(ctx, *in)
	require.NoError(t, err)
	require.NoError(t, ext.MutatePlan(ctx, in.Cluster, in.Config, res))
	require.True(t, res.Options.Compress)
	require.Equal(t, 65536, res.Options.MaxBytes)
	return res
}

// TestV3AddonsRSAApply: the gzip-wrapped init config with add-ons, RSA-2048
// and EC keys, passes upstream ignition-validate (one call for both), and
// the real Ignition engine applies the RSA one: every file (certificates,
// add-on manifests, apply.sh, index) with its content, mode and owner, and
// the bootstrap script with the add-on step after kubeadm init.
func TestV3AddonsRSAApply(t *testing.T) {
	validate := testenv.Tool(t, "ignition-validate")
	dir := t.TempDir()
	var files []string
	var rsaRes *bootstrap.Result
	var rsaOut *provisioning.Output
	for _, rsa := range []bool{true, false} {
		res := rsaInitWithAddons(t, rsa)
		out, err := res.Render()
		require.NoError(t, err)
		name := map[bool]string{true: "rsa.ign", false: "ec.ign"}[rsa]
		t.Logf("%s: %d bytes gzip-wrapped, %d uncompressed", name, len(out.Data), out.Sizes["uncompressed"])
		file := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(file, out.Data, 0o600))
		files = append(files, file)
		if rsa {
			rsaRes, rsaOut = res, out
		}
	}
	out, err := exec.Command(validate, append([]string{"--spec", "3.4.0"}, files...)...).CombinedOutput()
	require.NoError(t, err, "ignition-validate:\n%s", out)
	checkApplied(t, apply(t, rsaOut.Data), rsaRes.Plan)
}
