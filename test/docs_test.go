package test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	"github.com/nodeboot/nodeboot/bootstrap"
	"github.com/nodeboot/nodeboot/bootstrap/manifest"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	_ "github.com/nodeboot/nodeboot/provisioning/cloudinit"
	"github.com/nodeboot/nodeboot/test/testenv"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocumentationExamples loads every YAML example in README.md and docs/
// and renders it, so the documentation cannot drift from the code.
func TestDocumentationExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.ModuleRoot(), "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, filepath.Join(testenv.ModuleRoot(), "README.md"))
	examples := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, m := range yamlBlock.FindAllSubmatch(data, -1) {
			examples++
			t.Run(filepath.Base(f)+"#"+string(rune('0'+i)), func(t *testing.T) { renderExample(t, m[1]) })
		}
	}
	require.GreaterOrEqual(t, examples, 2)
}

func strictDecode(t *testing.T, doc []byte, into any) {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	require.NoError(t, err)
	strict, err := sigsjson.UnmarshalStrict(js, into)
	require.NoError(t, err)
	require.Empty(t, strict, "unknown or duplicate fields in the example")
}

// baseObjects is the embedded example's Cluster, Machine and Secrets.
func baseObjects(t *testing.T) *manifest.Set {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "cmd", "nodeboot", "example.yaml"))
	require.NoError(t, err)
	set, err := manifest.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	return set
}

func renderExample(t *testing.T, doc []byte) {
	t.Helper()
	var meta metav1.TypeMeta
	require.NoError(t, yaml.Unmarshal(doc, &meta))
	switch meta.Kind {
	case "KubeadmConfig":
		cfg := &bootstrapv1.KubeadmConfig{}
		strictDecode(t, doc, cfg)
		set := baseObjects(t)
		machine := set.Machines[0]
		delete(machine.Labels, clusterv1.MachineControlPlaneLabel)
		machine.Spec.Bootstrap.ConfigRef.Name = cfg.Name
		set.Clusters[0].Status.Conditions[0].Status = metav1.ConditionTrue
		set.Configs = []*bootstrapv1.KubeadmConfig{cfg}
		in, err := set.Input("")
		require.NoError(t, err)
		res, err := bootstrap.Build(context.Background(), *in)
		require.NoError(t, err)
		out, err := res.Render()
		require.NoError(t, err)
		require.Empty(t, out.Warnings, "a documented example renders without hazards")
	case "FirstBootAddon":
		addon := &addonsv1.FirstBootAddon{}
		strictDecode(t, doc, addon)
		_, errs := addonsctrl.ValidateSpec(&addon.Spec, field.NewPath("spec"))
		require.Empty(t, errs)
		set := baseObjects(t)
		cluster := set.Clusters[0]
		cluster.Labels = addon.Spec.ClusterSelector.MatchLabels
		scheme := runtime.NewScheme()
		require.NoError(t, addonsv1.AddToScheme(scheme))
		require.NoError(t, clusterv1.AddToScheme(scheme))
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(addon, cluster).Build()
		ext := addonsctrl.NewExtension(c, addonsctrl.ExtensionOptions{Compress: true, MaxBytes: 16384})
		in, err := set.Input("")
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, ext.MutateConfig(ctx, cluster, in.Config))
		res, err := bootstrap.Build(ctx, *in)
		require.NoError(t, err)
		before := len(res.Plan.Files)
		require.NoError(t, ext.MutatePlan(ctx, cluster, in.Config, res))
		require.Greater(t, len(res.Plan.Files), before, "the add-on's manifests are added to the init node")
		_, err = res.Render()
		require.NoError(t, err)
	case "":
		// clusterctl's configuration file, the one kind-less example.
		var cfg struct {
			Providers []struct {
				Name string `json:"name"`
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"providers"`
		}
		strictDecode(t, doc, &cfg)
		require.NotEmpty(t, cfg.Providers)
		for _, p := range cfg.Providers {
			require.Equal(t, "BootstrapProvider", p.Type)
			require.NotEmpty(t, p.URL)
		}
	case "Certificate":
		// cert-manager's, for the add-on fetch endpoint (docs/addons-fetch.md):
		// the fields of cert-manager.io/v1 it uses, and an ECDSA P-256 key,
		// the small CA that note promises.
		var c struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Metadata   metav1.ObjectMeta `json:"metadata"`
			Spec       struct {
				SecretName string   `json:"secretName"`
				DNSNames   []string `json:"dnsNames"`
				PrivateKey struct {
					Algorithm string `json:"algorithm"`
					Size      int    `json:"size"`
				} `json:"privateKey"`
				IssuerRef struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"issuerRef"`
			} `json:"spec"`
		}
		strictDecode(t, doc, &c)
		require.Equal(t, "cert-manager.io/v1", c.APIVersion)
		require.NotEmpty(t, c.Spec.SecretName)
		require.NotEmpty(t, c.Spec.DNSNames)
		require.Equal(t, "ECDSA", c.Spec.PrivateKey.Algorithm)
		require.Equal(t, 256, c.Spec.PrivateKey.Size)
	default:
		t.Fatalf("documentation example of kind %q has no test", meta.Kind)
	}
}
