package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/nodeboot/nodeboot/addons"
	addonsv1 "github.com/nodeboot/nodeboot/api/v1alpha1"
	addonsctrl "github.com/nodeboot/nodeboot/controllers/addons"
	"github.com/nodeboot/nodeboot/test/testenv"
)

// TestSchemeHasAddons: the manager's scheme serves FirstBootAddons, which
// the extension lists and the FirstBootAddon controller watches.
func TestSchemeHasAddons(t *testing.T) {
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"FirstBootAddon", "FirstBootAddonList"} {
		if gvk := addonsv1.GroupVersion.WithKind(kind); !s.Recognizes(gvk) {
			t.Errorf("the manager's scheme does not know %s", gvk)
		}
	}
	if !s.Recognizes(bootstrapv1.GroupVersion.WithKind("KubeadmConfig")) {
		t.Errorf("the manager's scheme lost KubeadmConfig")
	}
}

// TestReconcilersLinkAddons: the manager's KubeadmConfig reconciler carries
// the add-on extension, reading through the manager's client with the
// configured size budget and compression, and the FirstBootAddon reconciler
// reads workload clusters through the ClusterCache. The extension is
// exercised on a reference vector, so a reconciler wired without it, or with
// another client or options, fails here.
func TestReconcilersLinkAddons(t *testing.T) {
	dir := testenv.Vectors(t, "cc-init-minimal-v1.33")[0]
	res := testenv.BuildVector(t, dir)
	in := testenv.VectorInput(t, dir)
	cluster := in.Cluster.DeepCopy()
	cluster.Labels = map[string]string{"nodeboot.dev/addons": "dns"}

	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	dns := &addonsv1.FirstBootAddon{
		ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: cluster.Namespace},
		Spec: addonsv1.FirstBootAddonSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: cluster.Labels},
			Builtin: &addonsv1.BuiltinSource{Name: addonsv1.BuiltinNodeLocalDNS,
				NodeLocalDNS: &addonsv1.NodeLocalDNSParameters{KubeProxyMode: addonsv1.KubeProxyIPVS}},
		},
	}
	mgrClient := fake.NewClientBuilder().WithScheme(scheme).WithObjects(dns).Build()
	cc := clustercache.NewFakeClusterCache(mgrClient, client.ObjectKeyFromObject(cluster))

	o := parse(t)
	r := newReconcilers(clients{client: mgrClient, secretCachingClient: mgrClient, apiReader: mgrClient, clusterCache: cc}, o)

	kc := r.kubeadmConfig
	if kc.Client != mgrClient || kc.ClusterCache != cc || kc.TokenTTL != o.tokenTTL {
		t.Errorf("KubeadmConfig reconciler not wired to the manager's clients and flags: %+v", kc)
	}
	if len(kc.Extensions) != 1 {
		t.Fatalf("KubeadmConfig reconciler has %d extensions, want the add-on extension", len(kc.Extensions))
	}
	ext, ok := kc.Extensions[0].(*addonsctrl.Extension)
	if !ok {
		t.Fatalf("extension is %T, want *addons.Extension", kc.Extensions[0])
	}
	ctx := context.Background()

	// MutateConfig: the kubelet clusterDNS NodeLocal DNSCache needs in IPVS mode.
	config := in.Config.DeepCopy()
	if err := ext.MutateConfig(ctx, cluster, config); err != nil {
		t.Fatal(err)
	}
	want := []bootstrapv1.Arg{{Name: "cluster-dns", Value: ptr.To("169.254.20.10")}}
	for name, got := range map[string][]bootstrapv1.Arg{
		"init": config.Spec.InitConfiguration.NodeRegistration.KubeletExtraArgs,
		"join": config.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs,
	} {
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s kubeletExtraArgs (-want +got):\n%s", name, d)
		}
	}

	// MutatePlan: the add-on and the apply step on the init node, with the
	// manager's size budget and compression.
	if err := ext.MutatePlan(ctx, cluster, config, res); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range res.Plan.Files {
		if strings.HasPrefix(f.Path, addons.DefaultDir+"/") {
			paths = append(paths, f.Path)
		}
	}
	wantPaths := []string{addons.DefaultDir + "/000-dns.yaml", addons.DefaultDir + "/" + addons.IndexFile, addons.DefaultDir + "/" + addons.ScriptFile}
	if d := cmp.Diff(wantPaths, paths); d != "" {
		t.Errorf("add-on files of the init node (-want +got):\n%s", d)
	}
	if res.Options.MaxBytes != defaultAddonsMaxBytes || res.Options.Compress != defaultAddonsCompress {
		t.Errorf("render options %+v, want MaxBytes %d and Compress %t", res.Options, defaultAddonsMaxBytes, defaultAddonsCompress)
	}

	fba := r.firstBootAddon
	if fba.Client != mgrClient || fba.Workloads != cc || fba.APIReader == nil {
		t.Errorf("FirstBootAddon reconciler does not read workload clusters through the ClusterCache: %+v", fba)
	}
}

// TestAddonFlags: the add-on budget and compression are configurable.
func TestAddonFlags(t *testing.T) {
	o := parse(t)
	if o.addonsMaxBytes != 16384 || !o.addonsCompress || o.firstBootAddonConcurrency != 10 {
		t.Errorf("add-on flag defaults: max-bytes %d, compress %t, concurrency %d", o.addonsMaxBytes, o.addonsCompress, o.firstBootAddonConcurrency)
	}
	o = parse(t, "--addons-max-bytes=65536", "--addons-compress=false", "--firstbootaddon-concurrency=3")
	if o.addonsMaxBytes != 65536 || o.addonsCompress || o.firstBootAddonConcurrency != 3 {
		t.Errorf("add-on flags not applied: %+v", o)
	}
}

// TestAddonsInstalled: a missing FirstBootAddon kind turns add-ons off (the
// KubeadmConfig reconciler keeps running without the extension, and no
// FirstBootAddon controller is set up); other lookup errors stop the manager.
func TestAddonsInstalled(t *testing.T) {
	with := meta.NewDefaultRESTMapper(nil)
	with.Add(addonsv1.GroupVersion.WithKind("FirstBootAddon"), meta.RESTScopeNamespace)
	if ok, err := addonsInstalled(with); !ok || err != nil {
		t.Errorf("CRD installed: addonsInstalled = %t, %v", ok, err)
	}
	if ok, err := addonsInstalled(meta.NewDefaultRESTMapper(nil)); ok || err != nil {
		t.Errorf("CRD missing: addonsInstalled = %t, %v; want false, nil", ok, err)
	}
	if ok, err := addonsInstalled(failingMapper{meta.NewDefaultRESTMapper(nil)}); ok || err == nil {
		t.Errorf("API unreachable: addonsInstalled = %t, %v; want an error", ok, err)
	}

	r := newReconcilers(clients{}, parse(t)).withoutAddons()
	if r.firstBootAddon != nil || len(r.kubeadmConfig.Extensions) != 0 {
		t.Errorf("withoutAddons kept add-ons: %+v", r)
	}
}

type failingMapper struct{ meta.RESTMapper }

func (failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("connection refused")
}
