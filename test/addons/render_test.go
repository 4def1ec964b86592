package addons

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	"github.com/nodeboot/nodeboot/controllers"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	nodereportctrl "github.com/nodeboot/nodeboot/controllers/nodereport"
	"github.com/nodeboot/nodeboot/provisioning"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/legacy"
	_ "github.com/nodeboot/nodeboot/provisioning/ignition/v3"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// The extension plugs into the KubeadmConfig reconciler as is.
var _ controllers.Extension = (*addonsctrl.Extension)(nil)

const clusterLabel = "nodeboot.dev/addons"

// standardAddons are Flannel and NodeLocal DNSCache selecting labelled Clusters.
func standardAddons() []client.Object {
	sel := metav1.LabelSelector{MatchLabels: map[string]string{clusterLabel: "standard"}}
	return []client.Object{
		&addonsv1.FirstBootAddon{
			ObjectMeta: metav1.ObjectMeta{Name: "cni", Namespace: "default"},
			Spec:       addonsv1.FirstBootAddonSpec{ClusterSelector: sel, Builtin: &addonsv1.BuiltinSource{Name: addonsv1.BuiltinFlannel}},
		},
		&addonsv1.FirstBootAddon{
			ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "default"},
			Spec:       addonsv1.FirstBootAddonSpec{ClusterSelector: sel, Order: 10, Builtin: &addonsv1.BuiltinSource{Name: addonsv1.BuiltinNodeLocalDNS}},
		},
	}
}

func scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	require.NoError(t, clusterv1.AddToScheme(s))
	require.NoError(t, addonsv1.AddToScheme(s))
	return s
}

// initInput is a CABPK reference vector's init input with the Cluster labelled.
func initInput(t testing.TB, vector string) *bootstrap.Input {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.VectorsDir(t), vector, "input.yaml"))
	require.NoError(t, err)
	defer f.Close()
	set, err := manifest.Parse(f)
	require.NoError(t, err)
	in, err := set.Input("")
	require.NoError(t, err)
	in.Cluster.Labels = map[string]string{clusterLabel: "standard"}
	return in
}

// build runs the reconciler's flow: MutateConfig, Build, MutatePlan.
func build(t testing.TB, in *bootstrap.Input, opts addonsctrl.ExtensionOptions, objs ...client.Object) *bootstrap.Result {
	t.Helper()
	return buildWith(t, in, nil, opts, objs...)
}

// buildWith is build with the bootstrap reporter's Extension ahead of the
// add-ons' when rep is set, in cmd/manager's order: the add-on budget then
// counts the reporter's bytes.
func buildWith(t testing.TB, in *bootstrap.Input, rep *nodereportctrl.Extension, opts addonsctrl.ExtensionOptions, objs ...client.Object) *bootstrap.Result {
	t.Helper()
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).Build()
	ext := addonsctrl.NewExtension(c, opts)
	in.Config = in.Config.DeepCopy()
	require.NoError(t, ext.MutateConfig(ctx, in.Cluster, in.Config))
	res, err := bootstrap.Build(ctx, *in)
	require.NoError(t, err)
	if rep != nil {
		require.NoError(t, rep.MutatePlan(ctx, in.Cluster, in.Config, res))
	}
	require.NoError(t, ext.MutatePlan(ctx, in.Cluster, in.Config, res))
	return res
}

// renderInit renders an init node's cloud-config with the given add-ons.
func renderInit(t testing.TB, opts addonsctrl.ExtensionOptions, objs ...client.Object) *provisioning.Output {
	t.Helper()
	out, err := build(t, initInput(t, "cc-init-minimal-v1.33"), opts, objs...).Render()
	require.NoError(t, err)
	return out
}

// nodeFile is a write_files entry of rendered cloud-config.
type nodeFile struct {
	Path        string `yaml:"path"`
	Permissions string `yaml:"permissions"`
	Encoding    string `yaml:"encoding"`
	Content     string `yaml:"content"`
}

// extract reads rendered cloud-config (gzip or plain) as cloud-init would:
// its write_files and runcmd.
func extract(t testing.TB, data []byte) ([]nodeFile, []string) {
	t.Helper()
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		require.NoError(t, err)
		data, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	require.True(t, bytes.HasPrefix(data, []byte("## template: jinja\n#cloud-config\n")), "not cloud-config")
	var cc struct {
		WriteFiles []nodeFile `yaml:"write_files"`
		RunCmd     []any      `yaml:"runcmd"`
	}
	require.NoError(t, yaml.Unmarshal(data, &cc))
	var cmds []string
	for _, c := range cc.RunCmd {
		s, ok := c.(string)
		require.True(t, ok, "runcmd entry %v is not a shell string", c)
		cmds = append(cmds, s)
	}
	return cc.WriteFiles, cmds
}

// applyStep finds the add-on step in runcmd and writes the add-on files under
// dir, as cloud-init writes them under /etc/kubernetes/addons. It returns the
// step's command with that directory mapped to dir.
func applyStep(t testing.TB, data []byte, dir string) string {
	t.Helper()
	files, cmds := extract(t, data)
	n := 0
	for _, f := range files {
		if !strings.HasPrefix(f.Path, addons.DefaultDir+"/") {
			continue
		}
		require.Empty(t, f.Encoding, f.Path)
		mode := os.FileMode(0o600)
		if f.Permissions == "0700" {
			mode = 0o700
		}
		require.Contains(t, []string{"0600", "0700"}, f.Permissions, f.Path)
		require.NoError(t, os.WriteFile(filepath.Join(dir, strings.TrimPrefix(f.Path, addons.DefaultDir+"/")), []byte(f.Content), mode))
		n++
	}
	require.NotZero(t, n, "no add-on files in the rendered cloud-config")
	var step string
	for i, c := range cmds {
		if strings.Contains(c, addons.DefaultDir+"/"+addons.ScriptFile) {
			require.Empty(t, step, "two add-on steps")
			require.Greater(t, i, 0)
			require.Contains(t, cmds[i-1], "kubeadm init", "the add-on step must follow kubeadm init")
			step = c
		}
	}
	require.NotEmpty(t, step, "no add-on step in runcmd")
	return strings.ReplaceAll(step, addons.DefaultDir+"/", dir+"/")
}
