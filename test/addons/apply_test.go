package addons

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/nodeboot/nodeboot/addons"
	"github.com/nodeboot/nodeboot/addons/catalog"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// apiServer is a real kube-apiserver (envtest) with an admin kubeconfig file.
type apiServer struct {
	client     client.Client
	kubeconfig string
	assets     string
}

func startAPIServer(t *testing.T, crds ...string) *apiServer {
	t.Helper()
	assets := testenv.KubebuilderAssets(t)
	env := &envtest.Environment{BinaryAssetsDirectory: assets, CRDInstallOptions: envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}}
	cfg, err := env.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "kubernetes-admin", Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kc, err := user.KubeConfig()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "admin.conf")
	require.NoError(t, os.WriteFile(path, kc, 0o600))
	c, err := client.New(cfg, client.Options{Scheme: scheme(t)})
	require.NoError(t, err)
	return &apiServer{client: c, kubeconfig: path, assets: assets}
}

// run runs the extracted step as runcmd would, with kubectl from the envtest
// assets on PATH and the step's kubeconfig pointed at the test API server.
func (s *apiServer) run(t *testing.T, step, kubeconfig string, timeout int) (string, error, time.Duration) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", step)
	cmd.Env = append(os.Environ(),
		"PATH="+s.assets+":"+os.Getenv("PATH"),
		"NODEBOOT_ADDONS_KUBECONFIG="+kubeconfig,
		fmt.Sprintf("NODEBOOT_ADDONS_TIMEOUT=%d", timeout))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("apply step (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	return string(out), err, time.Since(start)
}

// objects reads every document of a staged manifest.
func objects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal(doc, &u.Object))
		if u.Object != nil {
			out = append(out, u)
		}
	}
}

// state returns the resourceVersion of every object of the staged manifests
// and of the record, failing when one is missing.
func (s *apiServer) state(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		for _, want := range objects(t, f) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			require.NoError(t, s.client.Get(context.Background(), client.ObjectKeyFromObject(want), got), "%s %s", want.GetKind(), client.ObjectKeyFromObject(want))
			managers := map[string]metav1.ManagedFieldsOperationType{}
			for _, m := range got.GetManagedFields() {
				managers[m.Manager] = m.Operation
			}
			require.Equal(t, metav1.ManagedFieldsOperationApply, managers[addons.FieldManager], "%s %s is not server-side applied by nodeboot", want.GetKind(), want.GetName())
			out[want.GetKind()+" "+client.ObjectKeyFromObject(want).String()] = got.GetResourceVersion()
		}
	}
	cm := s.record(t)
	out["record"] = cm.ResourceVersion
	return out
}

func (s *apiServer) record(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	require.NoError(t, s.client.Get(context.Background(), client.ObjectKey{Namespace: addons.RecordNamespace, Name: addons.RecordName}, cm))
	return cm
}

// index reads the staged addons.list: name -> sha256, version, file.
func index(t *testing.T, dir string) map[string][3]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, addons.IndexFile))
	require.NoError(t, err)
	out := map[string][3]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(l, "\t")
		require.Len(t, f, 5, l)
		out[f[0]] = [3]string{f[2], f[1], f[3]}
	}
	return out
}

func configMapAddon(name string, order int32, cm string) *addonsv1.FirstBootAddon {
	return &addonsv1.FirstBootAddon{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: addonsv1.FirstBootAddonSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{clusterLabel: "standard"}},
			Manifests:       &addonsv1.ManifestsSource{Kind: addonsv1.ManifestsConfigMap, Name: cm},
			Order:           order,
		},
	}
}

func manifestConfigMap(name string, docs map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: docs}
}

func nsAndConfigMap(ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payload\n  namespace: %s\ndata:\n  k: v\n", ns, ns)
}

func TestApplyStep(t *testing.T) {
	s := startAPIServer(t)
	opts := addonsctrl.ExtensionOptions{Compress: true, MaxBytes: 16384}

	dir := t.TempDir()
	step := applyStep(t, renderInit(t, opts, standardAddons()...).Data, dir)

	t.Run("applies every object and records it", func(t *testing.T) {
		_, err, _ := s.run(t, step, s.kubeconfig, 60)
		require.NoError(t, err)
		s.state(t, dir)
		rec := addons.ParseRecord(s.record(t).Data)
		idx := index(t, dir)
		require.Len(t, rec, 2)
		for name, want := range map[string]struct {
			version string
			objects int
		}{"cni": {"v0.28.4", 6}, "dns": {"1.26.4", 5}} {
			r := rec[name]
			require.Equal(t, "applied", r.Result, name)
			require.Equal(t, want.version, r.Version, name)
			require.Equal(t, idx[name][0], r.SHA256, name)
			require.Len(t, r.Objects, want.objects, name)
			staged, err := os.ReadFile(filepath.Join(dir, idx[name][2]))
			require.NoError(t, err)
			require.Equal(t, addons.Digest(staged), r.SHA256, name)
		}
		require.Contains(t, rec["cni"].Objects, "daemonset.apps/kube-flannel-ds")
		require.Contains(t, rec["dns"].Objects, "configmap/node-local-dns")
	})

	t.Run("a second run changes nothing", func(t *testing.T) {
		before := s.state(t, dir)
		_, err, _ := s.run(t, step, s.kubeconfig, 60)
		require.NoError(t, err)
		require.Equal(t, before, s.state(t, dir))
	})

	t.Run("a tampered manifest is refused before anything is applied", func(t *testing.T) {
		objs := []client.Object{
			configMapAddon("first", 0, "first-manifests"), manifestConfigMap("first-manifests", map[string]string{"a.yaml": nsAndConfigMap("tamper-first")}),
			configMapAddon("second", 1, "second-manifests"), manifestConfigMap("second-manifests", map[string]string{"a.yaml": nsAndConfigMap("tamper-second")}),
		}
		dir := t.TempDir()
		step := applyStep(t, renderInit(t, opts, objs...).Data, dir)
		second := filepath.Join(dir, index(t, dir)["second"][2])
		raw, err := os.ReadFile(second)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(second, bytes.Replace(raw, []byte("k: v"), []byte("k: evil"), 1), 0o600))

		out, err, _ := s.run(t, step, s.kubeconfig, 60)
		require.Error(t, err)
		require.Contains(t, out, "second: "+second+" has sha256")
		for _, ns := range []string{"tamper-first", "tamper-second"} {
			err := s.client.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
			require.True(t, apierrors.IsNotFound(err), "namespace %s must not exist: %v", ns, err)
		}
		rec := addons.ParseRecord(s.record(t).Data)
		require.True(t, strings.HasPrefix(rec["second"].Result, "failed: sha256 mismatch"), rec["second"].Result)
		require.True(t, strings.HasPrefix(rec["first"].Result, "not applied"), rec["first"].Result)
	})

	t.Run("URL sources are fetched with retries and verified", func(t *testing.T) {
		good := []byte(nsAndConfigMap("from-url"))
		// A presigned URL: the node fetches it whole but records and logs
		// it without its query.
		const signature = "X-Amz-Signature=s3cr3tSignature"
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/good.yaml":
				if r.URL.RawQuery != signature {
					http.Error(w, "bad signature", http.StatusForbidden)
					return
				}
				if hits.Add(1) == 1 {
					http.Error(w, "try again", http.StatusServiceUnavailable)
					return
				}
				_, _ = w.Write(good)
			case "/evil.yaml":
				_, _ = w.Write([]byte(nsAndConfigMap("evil")))
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		urlAddon := func(name, path, sum string) *addonsv1.FirstBootAddon {
			return &addonsv1.FirstBootAddon{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Spec: addonsv1.FirstBootAddonSpec{
					ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{clusterLabel: "standard"}},
					URL:             &addonsv1.URLSource{URL: srv.URL + path, SHA256: sum, Version: "1.0.0"},
				},
			}
		}

		dir := t.TempDir()
		step := applyStep(t, renderInit(t, opts, urlAddon("fetched", "/good.yaml?"+signature, addons.Digest(good))).Data, dir)
		out, err, _ := s.run(t, step, s.kubeconfig, 60)
		require.NoError(t, err)
		require.EqualValues(t, 2, hits.Load(), "the first fetch fails and is retried")
		require.Contains(t, out, "fetching "+srv.URL+"/good.yaml failed (attempt 1)")
		require.NotContains(t, out, signature)
		require.NoError(t, s.client.Get(context.Background(), client.ObjectKey{Namespace: "from-url", Name: "payload"}, &corev1.ConfigMap{}))
		rec := addons.ParseRecord(s.record(t).Data)
		require.Equal(t, addons.Record{Version: "1.0.0", SHA256: addons.Digest(good), Result: "applied",
			Objects: []string{"configmap/payload", "namespace/from-url"}}, rec["fetched"])

		dir = t.TempDir()
		step = applyStep(t, renderInit(t, opts, urlAddon("evil", "/evil.yaml", addons.Digest(good))).Data, dir)
		out, err, _ = s.run(t, step, s.kubeconfig, 60)
		require.Error(t, err)
		require.Contains(t, out, "refusing to apply anything")
		err = s.client.Get(context.Background(), client.ObjectKey{Name: "evil"}, &corev1.Namespace{})
		require.True(t, apierrors.IsNotFound(err), "%v", err)

		// A fetch that never succeeds is recorded without the URL's query,
		// fragment and userinfo, in the record and in the log alike.
		dir = t.TempDir()
		withUser := strings.Replace(srv.URL, "://", "://user:s3cr3tPassword@", 1)
		bad := urlAddon("unfetchable", "/missing.yaml", addons.Digest(good))
		bad.Spec.URL.URL = withUser + "/missing.yaml?" + signature + "#s3cr3tFragment"
		step = applyStep(t, renderInit(t, opts, bad).Data, dir)
		out, err, _ = s.run(t, step, s.kubeconfig, 3)
		require.Error(t, err)
		rec = addons.ParseRecord(s.record(t).Data)
		require.Equal(t, "failed: cannot fetch "+srv.URL+"/missing.yaml", rec["unfetchable"].Result)
		require.Contains(t, out, "unfetchable: cannot fetch "+srv.URL+"/missing.yaml\n")
		for _, secret := range []string{"s3cr3t", signature} {
			require.NotContains(t, out, secret)
			for k, v := range s.record(t).Data {
				require.NotContains(t, v, secret, k)
			}
		}
	})

	t.Run("every built-in variant is accepted by the API server", func(t *testing.T) {
		variants := map[string]catalog.Params{
			"nodelocaldns-iptables": {ServiceCIDR: "10.128.0.0/16"},
			"nodelocaldns-ipvs":     {KubeProxyMode: "ipvs", LocalIP: "169.254.0.10", ClusterDomain: "corp.example"},
			"flannel-vni":           {PodCIDR: "10.244.0.0/16", VNI: 42, Port: 4789},
		}
		for name, p := range variants {
			r, err := catalog.Render(strings.SplitN(name, "-", 2)[0], "", p)
			require.NoError(t, err)
			file := filepath.Join(t.TempDir(), name+".yaml")
			require.NoError(t, os.WriteFile(file, r.Manifest, 0o600))
			cmd := exec.Command(filepath.Join(s.assets, "kubectl"), "--kubeconfig", s.kubeconfig, "apply",
				"--server-side", "--field-manager=nodeboot", "--dry-run=server", "-f", file)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: %s", name, out)
		}
	})

	t.Run("an unreachable API server fails clearly within its bound", func(t *testing.T) {
		raw, err := os.ReadFile(s.kubeconfig)
		require.NoError(t, err)
		var kc map[string]any
		require.NoError(t, yaml.Unmarshal(raw, &kc))
		for _, c := range kc["clusters"].([]any) {
			c.(map[string]any)["cluster"].(map[string]any)["server"] = "https://127.0.0.1:1"
		}
		bad, err := yaml.Marshal(kc)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "unreachable.conf")
		require.NoError(t, os.WriteFile(path, bad, 0o600))
		const bound = 6
		out, err, took := s.run(t, step, path, bound)
		require.Error(t, err)
		require.Contains(t, out, fmt.Sprintf("API server not ready after %ds", bound))
		require.Less(t, took, (bound+10)*time.Second)
	})
}
