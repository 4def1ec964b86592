// Package release_test builds the release artefacts as an operator does
// (make release-manifests IMG=...), installs them the way clusterctl does —
// clusterctl itself, built from the pinned cluster-api module, reading them
// from a local provider repository with variable substitution — and applies
// what clusterctl produced to a real API server (envtest) server-side.
package release_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/test/testenv"
)

// img is a placeholder reference: clusterctl wants a full one.
const (
	img     = "example.com/nodeboot-manager:v0.1.0"
	version = "v0.1.0"
)

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func TestReleaseWithClusterctl(t *testing.T) {
	root := testenv.ModuleRoot()
	tmp := t.TempDir()
	rel := filepath.Join(tmp, "release")
	run(t, root, nil, "make", "--no-print-directory", "release-manifests", "RELEASE_DIR="+rel, "IMG="+img, "GO="+goCmd())

	// A local clusterctl provider repository: {base}/{provider label}/{version}/.
	repo := filepath.Join(tmp, "repo", "bootstrap-kubeadm", version)
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bootstrap-components.yaml", "metadata.yaml"} {
		b, err := os.ReadFile(filepath.Join(rel, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The override of docs/install.md, plus a variable from the file.
	config := filepath.Join(tmp, "clusterctl.yaml")
	if err := os.WriteFile(config, []byte("providers:\n- name: kubeadm\n  type: BootstrapProvider\n  url: file://"+repo+"/bootstrap-components.yaml\nKUBEADM_BOOTSTRAP_TOKEN_TTL: 20m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clusterctl := filepath.Join(tmp, "clusterctl")
	run(t, root, nil, goCmd(), "build", "-o", clusterctl, "sigs.k8s.io/cluster-api/cmd/clusterctl")
	// clusterctl keeps state under $HOME and $XDG_CONFIG_HOME: both private.
	env := []string{"HOME=" + tmp, "XDG_CONFIG_HOME=" + filepath.Join(tmp, "xdg"), "EXP_KUBEADM_BOOTSTRAP_FORMAT_IGNITION=true"}

	describe := string(run(t, tmp, env, clusterctl, "generate", "provider", "--bootstrap", "kubeadm:"+version, "--config", config, "--describe"))
	for _, want := range []string{"Version:            " + version, "TargetNamespace:    capi-kubeadm-bootstrap-system", "- KUBEADM_BOOTSTRAP_TOKEN_TTL", "- " + img} {
		if !strings.Contains(describe, want) {
			t.Errorf("clusterctl --describe lacks %q:\n%s", want, describe)
		}
	}
	components := run(t, tmp, env, clusterctl, "generate", "provider", "--bootstrap", "kubeadm:"+version, "--config", config)
	if bytes.Contains(components, []byte("${")) {
		t.Errorf("clusterctl left variables unsubstituted")
	}
	for _, want := range []string{
		"--bootstrap-token-ttl=20m", // from the config file
		"--feature-gates=MachinePool=true,KubeadmBootstrapFormatIgnition=true,PriorityQueue=true,ReconcilerRateLimiting=true", // from the environment
		"--diagnostics-address=:8443", // the default
		"image: " + img,
	} {
		if !bytes.Contains(components, []byte(want)) {
			t.Errorf("clusterctl's components lack %q", want)
		}
	}

	objs := decode(t, components)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetLabels()["cluster.x-k8s.io/provider"] != "bootstrap-kubeadm" {
			t.Errorf("%s %s lacks the provider label clusterctl and CABPK use", o.GetKind(), o.GetName())
		}
	}
	for kind, n := range map[string]int{"CustomResourceDefinition": 3, "Deployment": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1,
		"ServiceAccount": 1, "Service": 1, "Namespace": 1, "Certificate": 1, "Issuer": 1, "MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1} {
		if kinds[kind] != n {
			t.Errorf("%d %s, want %d (all: %v)", kinds[kind], kind, n, kinds)
		}
	}
	checkWiring(t, objs)
	apply(t, objs)
}

// checkWiring: cert-manager injects the CA into both webhook configurations
// and the conversion webhooks of CABPK's CRDs; the serving certificate names
// the webhook Service; the Deployment mounts the certificate's Secret.
func checkWiring(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	const inject = "capi-kubeadm-bootstrap-system/capi-kubeadm-bootstrap-serving-cert"
	for _, o := range objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			if o.GetAnnotations()["cert-manager.io/inject-ca-from"] != inject {
				t.Errorf("%s: inject-ca-from %q", o.GetKind(), o.GetAnnotations()["cert-manager.io/inject-ca-from"])
			}
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for _, h := range hooks {
				svc, _, _ := unstructured.NestedMap(h.(map[string]any), "clientConfig", "service")
				if svc["name"] != "capi-kubeadm-bootstrap-webhook-service" || svc["namespace"] != "capi-kubeadm-bootstrap-system" {
					t.Errorf("%s webhook service %v", o.GetKind(), svc)
				}
			}
		case "CustomResourceDefinition":
			if strings.HasSuffix(o.GetName(), ".addons.nodeboot.dev") {
				continue
			}
			if o.GetAnnotations()["cert-manager.io/inject-ca-from"] != inject {
				t.Errorf("CRD %s: inject-ca-from %q", o.GetName(), o.GetAnnotations()["cert-manager.io/inject-ca-from"])
			}
			svc, _, _ := unstructured.NestedMap(o.Object, "spec", "conversion", "webhook", "clientConfig", "service")
			if svc["name"] != "capi-kubeadm-bootstrap-webhook-service" || svc["path"] != "/convert" {
				t.Errorf("CRD %s conversion webhook %v", o.GetName(), svc)
			}
		case "Certificate":
			dns, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "dnsNames")
			secret, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
			if len(dns) != 2 || dns[0] != "capi-kubeadm-bootstrap-webhook-service.capi-kubeadm-bootstrap-system.svc" || secret != "capi-kubeadm-bootstrap-webhook-service-cert" {
				t.Errorf("Certificate dnsNames %q secret %q", dns, secret)
			}
		case "Deployment":
			vols, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			if len(vols) != 1 || vols[0].(map[string]any)["secret"].(map[string]any)["secretName"] != "capi-kubeadm-bootstrap-webhook-service-cert" {
				t.Errorf("Deployment volumes %v", vols)
			}
		}
	}
}

// apply applies every object server-side, CRDs first (cert-manager's two
// kinds stand in as schemaless CRDs: cert-manager is not in the module
// proxy), and checks each was stored and every CRD is established.
func apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	testenv.KubebuilderAssets(t)
	env := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{
		standIn("Certificate", "certificates"), standIn("Issuer", "issuers"),
	}}}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ssa := func(o *unstructured.Unstructured) {
		//nolint:staticcheck // client.Apply on unstructured objects is server-side apply.
		if err := k8s.Patch(ctx, o.DeepCopy(), client.Apply, client.FieldOwner("clusterctl"), client.ForceOwnership); err != nil {
			t.Errorf("server-side apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	var crds []string
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace" {
			ssa(o)
			if o.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, o.GetName())
			}
		}
	}
	for _, name := range crds {
		deadline := time.Now().Add(30 * time.Second)
		for {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			err := k8s.Get(ctx, client.ObjectKey{Name: name}, crd)
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s not established: %v %+v", name, err, crd.Status.Conditions)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" {
			ssa(o)
		}
	}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s/%s not stored: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// standIn is a schemaless CRD for one cert-manager kind.
func standIn(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".cert-manager.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cert-manager.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTrue(),
				}},
			}},
		},
	}
}

func ptrTrue() *bool { b := true; return &b }

func decode(t *testing.T, raw []byte) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(raw))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}
